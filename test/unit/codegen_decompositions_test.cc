// The decomposition kernels (runtime/cpu/decompositions.cc) checked by what they promise: reconstructions, unitary
// factors, orderings and LAPACK's conventions (getf2's pivots, larfg's signs); then the custom calls of
// ir/decomposition_calls.h compiled and checked bit for bit against the interpreter, which calls the same kernels.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "ir/decomposition_calls.h"
#include "runtime/cpu/xlac_runtime_kernels.h"

namespace xlac::codegen::testing {
namespace {

using cd = std::complex<double>;

// A row-major rows x cols matrix of complex doubles (the c128 kernels' storage).
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<cd> v;
  Matrix(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c)) {}
  cd& operator()(int64_t i, int64_t j) { return v[static_cast<size_t>(i * cols + j)]; }
  cd operator()(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * cols + j)]; }
};

Matrix Random(int64_t rows, int64_t cols, bool complex, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Matrix m(rows, cols);
  for (cd& e : m.v) e = cd(u(gen), complex ? u(gen) : 0);
  return m;
}

Matrix Multiply(const Matrix& a, const Matrix& b) {
  Matrix c(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < b.cols; ++j) {
      for (int64_t k = 0; k < a.cols; ++k) c(i, j) += a(i, k) * b(k, j);
    }
  }
  return c;
}

Matrix Adjoint(const Matrix& a) {
  Matrix t(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < a.cols; ++j) t(j, i) = std::conj(a(i, j));
  }
  return t;
}

double MaxDifference(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  double d = 0;
  for (size_t i = 0; i < a.v.size() && i < b.v.size(); ++i) d = std::max(d, std::abs(a.v[i] - b.v[i]));
  return d;
}

// Columns orthonormal: Q^H Q = I.
void ExpectOrthonormalColumns(const Matrix& q, const char* what) {
  Matrix g = Multiply(Adjoint(q), q);
  Matrix eye(q.cols, q.cols);
  for (int64_t i = 0; i < q.cols; ++i) eye(i, i) = 1;
  EXPECT_LT(MaxDifference(g, eye), 1e-12) << what;
}

TEST(DecompositionKernels, LuPivotsAsGetf2AndReconstructs) {
  // Column 0's largest |.| is row 2 (first of the ties 4 and -4 wins).
  std::vector<double> a = {1, 2, 3, 2, 1, 0, 4, 1, 1, -4, 0, 2};  // 4 x 3
  std::vector<double> lu(12);
  int32_t pivots[3], perm[4], info = -1;
  xlac_rt_lu_f64(a.data(), lu.data(), pivots, perm, &info, 1, 4, 3);
  EXPECT_EQ(pivots[0], 2);
  EXPECT_EQ(perm[0], 2);
  EXPECT_EQ(info, 0);
  // P A = L U, with L unit lower trapezoidal (4 x 3) and U upper (3 x 3).
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      double s = 0;
      for (int64_t k = 0; k <= std::min<int64_t>(i, j); ++k) s += (k == i ? 1.0 : lu[i * 3 + k]) * lu[k * 3 + j];
      EXPECT_NEAR(s, a[perm[i] * 3 + j], 1e-14) << i << "," << j;
    }
  }
  // A singular matrix: info names the first zero pivot (1-based), as getrf does.
  std::vector<double> singular = {1, 2, 2, 4};
  int32_t p2[2], perm2[2];
  xlac_rt_lu_f64(singular.data(), lu.data(), p2, perm2, &info, 1, 2, 2);
  EXPECT_EQ(info, 2);
}

TEST(DecompositionKernels, QrAndHouseholderProductReconstructComplex) {
  for (auto [m, n] : {std::pair<int64_t, int64_t>{5, 3}, {3, 5}, {4, 4}}) {
    Matrix a = Random(m, n, true, 11);
    const int64_t k = std::min(m, n);
    Matrix r(m, n);
    std::vector<cd> taus(static_cast<size_t>(k));
    xlac_rt_qr_c128(a.v.data(), r.v.data(), taus.data(), 1, m, n);
    // Q: the product of the k reflectors, m x m (pad the reflector matrix to m columns).
    Matrix padded(m, m);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; ++j) padded(i, j) = r(i, j);
    }
    Matrix q(m, m);
    xlac_rt_householder_product_c128(padded.v.data(), taus.data(), q.v.data(), 1, m, m, k);
    ExpectOrthonormalColumns(q, "Q");
    Matrix upper(m, n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = i; j < n; ++j) upper(i, j) = r(i, j);
    }
    EXPECT_LT(MaxDifference(Multiply(q, upper), a), 1e-13) << m << "x" << n;
    // larfg's beta is real: R's diagonal has no imaginary part.
    for (int64_t i = 0; i < k; ++i) EXPECT_EQ(r(i, i).imag(), 0) << i;
  }
}

TEST(DecompositionKernels, EighOfEitherTriangleSortedAscending) {
  const int64_t n = 6;
  Matrix h = Random(n, n, true, 5);
  h = Multiply(Adjoint(h), h);  // Hermitian positive semi-definite
  for (bool lower : {true, false}) {
    // Garbage in the triangle that is not read.
    Matrix in = h;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (lower ? j > i : j < i) in(i, j) = cd(99, -99);
      }
    }
    Matrix v(n, n);
    std::vector<double> w(n);
    int32_t info = -1;
    xlac_rt_eigh_c128(in.v.data(), v.v.data(), w.data(), &info, 1, n, lower, 1);
    EXPECT_EQ(info, 0);
    EXPECT_TRUE(std::is_sorted(w.begin(), w.end()));
    ExpectOrthonormalColumns(v, "eigenvectors");
    Matrix vw = v;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) vw(i, j) *= w[j];
    }
    EXPECT_LT(MaxDifference(Multiply(h, v), vw), 1e-12) << (lower ? "lower" : "upper");
  }
}

TEST(DecompositionKernels, SvdFullReducedWideTallAndRankDeficient) {
  struct Case {
    int64_t m, n;
    bool full, rank_one;
  };
  for (Case c : {Case{5, 3, true, false}, Case{5, 3, false, false}, Case{3, 5, true, false}, Case{3, 5, false, false},
                 Case{4, 4, true, true}, Case{6, 2, true, true}}) {
    Matrix a = Random(c.m, c.n, true, 3);
    if (c.rank_one) {
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t j = 0; j < c.n; ++j) a(i, j) = a(i, 0) * a(0, j);
      }
    }
    const int64_t k = std::min(c.m, c.n);
    const int64_t ucols = c.full ? c.m : k, vrows = c.full ? c.n : k;
    Matrix u(c.m, ucols), vt(vrows, c.n);
    std::vector<double> s(static_cast<size_t>(k));
    int32_t info = -1;
    xlac_rt_svd_c128(a.v.data(), s.data(), u.v.data(), vt.v.data(), &info, 1, c.m, c.n, c.full);
    const std::string what = std::to_string(c.m) + "x" + std::to_string(c.n) + (c.full ? " full" : " reduced");
    EXPECT_EQ(info, 0) << what;
    EXPECT_TRUE(std::is_sorted(s.rbegin(), s.rend())) << what;
    ExpectOrthonormalColumns(u, "U");
    ExpectOrthonormalColumns(Adjoint(vt), "V");
    Matrix us(c.m, k);
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < k; ++j) us(i, j) = u(i, j) * s[j];
    }
    Matrix vk(k, c.n);
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < c.n; ++j) vk(i, j) = vt(i, j);
    }
    EXPECT_LT(MaxDifference(Multiply(us, vk), a), 1e-13) << what;
  }
}

TEST(DecompositionKernels, NonFiniteInputsReportInfo) {
  std::vector<float> a = {1, 2, NAN, 3};  // the NaN in the lower triangle, which eigh reads
  std::vector<float> v(4), w(2), s(2), u(4), vt(4);
  int32_t info = 0;
  xlac_rt_eigh_f32(a.data(), v.data(), w.data(), &info, 1, 2, 1, 1);
  EXPECT_EQ(info, 1);
  EXPECT_TRUE(std::isnan(w[0]));
  info = 0;
  xlac_rt_svd_f32(a.data(), s.data(), u.data(), vt.data(), &info, 1, 2, 2, 1);
  EXPECT_EQ(info, 1);
  EXPECT_TRUE(std::isnan(s[0]));
}

TEST(DecompositionCalls, MalformedSignaturesAreErrors) {
  std::unique_ptr<Module> module = ParseAndVerify(R"(
HloModule m
ENTRY e {
  a = f32[3,4] parameter(0)
  ROOT lu = (f32[3,4], s32[4], s32[3]) custom-call(a), custom_call_target="LuDecomposition"
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<DecompositionCall> call = DecompositionCallOf(*module->entry_computation()->root());
  ASSERT_FALSE(call.ok());
  EXPECT_NE(call.status().message().find("pivots s32[..., min(m, n)]"), std::string::npos) << call.status();
}

// Every call compiled, on a batch, in each element type with a kernel, against the interpreter.
TEST(DecompositionCalls, CompiledMatchesInterpreter) {
  for (const char* t : {"f32", "f64", "c64", "c128", "bf16"}) {
    const std::string type = t;
    const std::string real = type == "c64" ? "f32" : type == "c128" ? "f64" : type;
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  a = $T[2,4,3] parameter(0)
  lu = ($T[2,4,3], s32[2,3], s32[2,4], s32[2]) custom-call(a), custom_call_target="LuDecomposition"
  qr = ($T[2,4,3], $T[2,3]) custom-call(a), custom_call_target="Qr"
  r = $T[2,4,3] get-tuple-element(qr), index=0
  taus = $T[2,3] get-tuple-element(qr), index=1
  q = $T[2,4,3] custom-call(r, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
  ROOT out = (($T[2,4,3], s32[2,3], s32[2,4], s32[2]), $T[2,4,3]) tuple(lu, q)
})",
                                      type));
    const std::string eigh_svd = R"(
HloModule m
ENTRY e {
  a = $T[2,3,3]{1,2,0} parameter(0)
  eigh = ($T[2,3,3], $R[2,3], s32[2]) custom-call(a), custom_call_target="Eigh", backend_config="0,1"
  svd = ($R[2,3], $T[2,3,3], $T[2,3,3], s32[2]) custom-call(a), custom_call_target="xlac.svd"
  ROOT out = (($T[2,3,3], $R[2,3], s32[2]), ($R[2,3], $T[2,3,3], $T[2,3,3], s32[2])) tuple(eigh, svd)
})";
    std::string text = WithType(eigh_svd, type);
    for (size_t at; (at = text.find("$R")) != std::string::npos;) text.replace(at, 2, real);
    ExpectMatchesInterpreter(text);
  }
}

}  // namespace
}  // namespace xlac::codegen::testing
