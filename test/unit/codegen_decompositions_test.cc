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

// ---- gtsv, sytrd / hetrd, gehrd ----

TEST(DecompositionKernels, TridiagonalSolvePivotsAsGtsv) {
  // A = [[1, 2, 0], [4, 5, 6], [0, 7, 8]]: both steps interchange rows (|d| < |dl|), so U = [[4, 5, 6], [0, 7, 8],
  // [0, 0, -33/14]] with its second super-diagonal in dl_out[1]; dl_out[0] and du_out[2] are never touched.
  std::vector<double> dl = {-9, 4, 7}, d = {1, 5, 8}, du = {2, 6, -9};
  std::vector<double> b = {5, 32, 37, 1, 10, 15};  // n x nrhs: two right-hand sides
  std::vector<double> dl_out(3), d_out(3), du_out(3), x(6);
  int32_t info = -1;
  xlac_rt_tridiagonal_solve_f64(dl.data(), d.data(), du.data(), b.data(), dl_out.data(), d_out.data(), du_out.data(),
                                x.data(), &info, 1, 3, 2);
  EXPECT_EQ(info, 0);
  EXPECT_EQ(d_out[0], 4);
  EXPECT_EQ(d_out[1], 7);
  EXPECT_NEAR(d_out[2], -33.0 / 14, 1e-15);
  EXPECT_EQ(du_out[0], 5);
  EXPECT_EQ(du_out[1], 8);
  EXPECT_EQ(du_out[2], -9);
  EXPECT_EQ(dl_out[0], -9);
  EXPECT_EQ(dl_out[1], 6);
  EXPECT_EQ(dl_out[2], 7);
  // A x = b for both columns (b is n x nrhs, row-major).
  const double a[3][3] = {{1, 2, 0}, {4, 5, 6}, {0, 7, 8}};
  for (int j = 0; j < 2; ++j) {
    for (int i = 0; i < 3; ++i) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += a[i][k] * x[k * 2 + j];
      EXPECT_NEAR(s, b[i * 2 + j], 1e-13) << i << "," << j;
    }
  }
  // zgtsv's pivot measure is |re| + |im|: |3+3i|_1 = 6 >= 5 keeps the row although |3+3i| < 5.
  std::vector<cd> cdl = {0, 5}, cd_ = {cd(3, 3), 1}, cdu = {1, 0}, cb = {1, 1};
  std::vector<cd> cdl_out(2), cd_out(2), cdu_out(2), cx(2);
  xlac_rt_tridiagonal_solve_c128(cdl.data(), cd_.data(), cdu.data(), cb.data(), cdl_out.data(), cd_out.data(),
                                 cdu_out.data(), cx.data(), &info, 1, 2, 1);
  EXPECT_EQ(info, 0);
  EXPECT_EQ(cd_out[0], cd(3, 3));
  EXPECT_LT(std::abs(cd(3, 3) * cx[0] + cx[1] - 1.0) + std::abs(5.0 * cx[0] + cx[1] - 1.0), 1e-15);
  // A zero pivot: info names it (1-based) and the solution is not computed, as gtsv.
  std::vector<double> zl = {0, 0, 1}, zd = {0, 1, 1}, zu = {1, 1, 0}, zb = {1, 2, 3}, zx(3), zo(3);
  xlac_rt_tridiagonal_solve_f64(zl.data(), zd.data(), zu.data(), zb.data(), zo.data(), zo.data(), zo.data(), zx.data(),
                                &info, 1, 3, 1);
  EXPECT_EQ(info, 1);
  EXPECT_EQ(zx[0], 1);
}

// Q = H_first ... H_last of the reflectors v_i (columns of `v`, v_i[pivot_i] = 1 implied) and taus.
Matrix ReflectorProduct(int64_t n, const std::vector<std::vector<cd>>& vs, const std::vector<cd>& taus) {
  Matrix q(n, n);
  for (int64_t i = 0; i < n; ++i) q(i, i) = 1;
  for (size_t r = 0; r < vs.size(); ++r) {
    Matrix h(n, n);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) h(i, j) = (i == j ? 1.0 : 0.0) - taus[r] * vs[r][i] * std::conj(vs[r][j]);
    }
    q = Multiply(q, h);
  }
  return q;
}

TEST(DecompositionKernels, TridiagonalReductionAsHetrd) {
  const int64_t n = 5;
  Matrix a = Random(n, n, true, 21);
  for (bool lower : {true, false}) {
    Matrix packed(n, n);
    std::vector<double> d(n), e(n - 1);
    std::vector<cd> taus(n - 1);
    xlac_rt_tridiagonal_reduction_c128(a.v.data(), packed.v.data(), d.data(), e.data(), taus.data(), 1, n, lower);
    // The Hermitian matrix the triangle names (diagonal real).
    Matrix h(n, n);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const bool stored = lower ? i >= j : i <= j;
        h(i, j) = i == j ? cd(a(i, i).real()) : stored ? a(i, j) : std::conj(a(j, i));
      }
    }
    // hetrd's Q: H_0 ... H_{n-2} (lower, v_i[i+1] = 1, below in column i) or H_{n-2} ... H_0 (upper, v_i[i] = 1,
    // above in column i+1).
    std::vector<std::vector<cd>> vs;
    std::vector<cd> ts;
    for (int64_t r = 0; r + 1 < n; ++r) {
      const int64_t i = lower ? r : n - 2 - r;
      std::vector<cd> v(n, cd(0));
      if (lower) {
        v[i + 1] = 1;
        for (int64_t k = i + 2; k < n; ++k) v[k] = packed(k, i);
      } else {
        v[i] = 1;
        for (int64_t k = 0; k < i; ++k) v[k] = packed(k, i + 1);
      }
      vs.push_back(v);
      ts.push_back(taus[i]);
    }
    Matrix q = ReflectorProduct(n, vs, ts);
    ExpectOrthonormalColumns(q, "Q");
    Matrix t(n, n);
    for (int64_t i = 0; i < n; ++i) t(i, i) = d[i];
    for (int64_t i = 0; i + 1 < n; ++i) t(i + 1, i) = t(i, i + 1) = e[i];
    EXPECT_LT(MaxDifference(Multiply(Multiply(Adjoint(q), h), q), t), 1e-13) << (lower ? "lower" : "upper");
    // The packed form: d on the diagonal, e next to it in the named triangle, the other triangle a's own.
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(packed(i, i), cd(d[i])) << i;
      for (int64_t j = 0; j < n; ++j) {
        if (lower ? j > i : j < i) EXPECT_EQ(packed(i, j), a(i, j)) << i << "," << j;
      }
    }
    for (int64_t i = 0; i + 1 < n; ++i) EXPECT_EQ(lower ? packed(i + 1, i) : packed(i, i + 1), cd(e[i])) << i;
  }
}

TEST(DecompositionKernels, HessenbergAsGehrd) {
  const int64_t n = 6;
  for (auto [low, high] : {std::pair<int32_t, int32_t>{1, 6}, {2, 5}}) {
    Matrix a = Random(n, n, true, 33);
    // gehrd's precondition for low > 1 or high < n: the matrix is already triangular outside rows/columns low..high
    // (as gebal leaves it).
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < i; ++j) {
        if (j < low - 1 || i > high - 1) a(i, j) = 0;
      }
    }
    Matrix packed(n, n);
    std::vector<cd> taus(n - 1);
    xlac_rt_hessenberg_c128(a.v.data(), packed.v.data(), taus.data(), 1, n, low, high);
    std::vector<std::vector<cd>> vs;
    std::vector<cd> ts;
    for (int64_t i = 0; i + 1 < n; ++i) {
      if (i < low - 1 || i >= high - 1) {
        EXPECT_EQ(taus[i], cd(0)) << i;
        continue;
      }
      std::vector<cd> v(n, cd(0));
      v[i + 1] = 1;
      for (int64_t k = i + 2; k < high; ++k) v[k] = packed(k, i);
      vs.push_back(v);
      ts.push_back(taus[i]);
    }
    Matrix q = ReflectorProduct(n, vs, ts), h = packed;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j + 1 < i; ++j) h(i, j) = 0;
    }
    ExpectOrthonormalColumns(q, "Q");
    EXPECT_LT(MaxDifference(Multiply(Multiply(q, h), Adjoint(q)), a), 1e-13) << low << "," << high;
    // larfg's beta is real: so is the sub-diagonal the reflectors leave.
    for (int64_t i = low - 1; i + 1 < high; ++i) EXPECT_EQ(packed(i + 1, i).imag(), 0) << i;
  }
}

// ---- geev, gees ----

// Column j of v (n x n, complex, row-major).
std::vector<cd> Column(const std::vector<cd>& v, int64_t n, int64_t j) {
  std::vector<cd> c(n);
  for (int64_t i = 0; i < n; ++i) c[i] = v[i * n + j];
  return c;
}

// geev's promises for the eigenvector columns of v: A v_j = w_j v_j (right) or v_j^H A = w_j v_j^H (left), unit
// 2-norm, the component of largest modulus real (and positive when `positive`).
void ExpectEigenvectors(const Matrix& a, const std::vector<cd>& w, const std::vector<cd>& v, bool left, bool positive,
                        const char* what) {
  const int64_t n = a.rows;
  for (int64_t j = 0; j < n; ++j) {
    std::vector<cd> x = Column(v, n, j);
    double residual = 0, norm = 0, largest = -1;
    int64_t k = 0;
    for (int64_t i = 0; i < n; ++i) {
      cd s = 0;
      for (int64_t q = 0; q < n; ++q) s += left ? std::conj(x[q]) * a(q, i) : a(i, q) * x[q];
      residual = std::max(residual, std::abs(s - w[j] * (left ? std::conj(x[i]) : x[i])));
      norm += std::norm(x[i]);
      if (std::norm(x[i]) > largest) largest = std::norm(x[i]), k = i;
    }
    EXPECT_LT(residual, 1e-12) << what << " " << j;
    EXPECT_NEAR(norm, 1, 1e-14) << what << " " << j;
    EXPECT_EQ(x[k].imag(), 0) << what << " " << j;
    if (positive) EXPECT_GT(x[k].real(), 0) << what << " " << j;
  }
}

TEST(DecompositionKernels, EigComplexAsZgeev) {
  for (int64_t n : {1, 2, 5, 8}) {
    Matrix a = Random(n, n, true, static_cast<uint32_t>(40 + n));
    std::vector<cd> w(n), vl(n * n), vr(n * n);
    int32_t info = -1;
    xlac_rt_eig_c128(a.v.data(), w.data(), nullptr, vl.data(), vr.data(), &info, 1, n, 1, 1);
    EXPECT_EQ(info, 0);
    ExpectEigenvectors(a, w, vr, false, true, "right");
    ExpectEigenvectors(a, w, vl, true, true, "left");
  }
  // zgeev's order for the 4x4 iota matrix (the eigenvalues in the order zlahqr deflates them, as jaxlib returns).
  Matrix iota(4, 4);
  for (int64_t i = 0; i < 16; ++i) iota.v[i] = static_cast<double>(i);
  std::vector<cd> w(4), vl(16), vr(16);
  int32_t info = -1;
  xlac_rt_eig_c128(iota.v.data(), w.data(), nullptr, vl.data(), vr.data(), &info, 1, 4, 1, 1);
  EXPECT_NEAR(w[0].real(), 32.464249196572972, 1e-13);
  EXPECT_NEAR(w[1].real(), -2.4642491965729794, 1e-13);
  EXPECT_NEAR(vr[0].real(), 0.11417645138733866, 1e-14);  // LAPACK's vectors, phase included
  EXPECT_NEAR(vl[1].real(), 0.8288327563197503, 1e-14);
  // Vectors not asked for are zeros; a non-finite input gives info -4 and NaNs, as jaxlib's geev.
  std::fill(vl.begin(), vl.end(), cd(7));
  xlac_rt_eig_c128(iota.v.data(), w.data(), nullptr, vl.data(), vr.data(), &info, 1, 4, 0, 1);
  EXPECT_EQ(vl[5], cd(0));
  iota(1, 2) = NAN;
  xlac_rt_eig_c128(iota.v.data(), w.data(), nullptr, vl.data(), vr.data(), &info, 1, 4, 1, 1);
  EXPECT_EQ(info, -4);
  EXPECT_TRUE(std::isnan(w[0].real()));
}

TEST(DecompositionKernels, EigRealAsDgeev) {
  // Reference LAPACK's dgeev on this matrix: a complex pair first (positive imaginary part first), then 3 and
  // 2.706...; the pair's vectors conjugate, the real eigenvalues' vectors real.
  const std::vector<double> a = {1, 2, 0, 0, -3, 1, 0, 5, 0, 0, 2, 1, 1, 0, -1, 3};
  std::vector<double> wr(4), wi(4);
  std::vector<cd> vl(16), vr(16);
  int32_t info = -1;
  xlac_rt_eig_f64(a.data(), wr.data(), wi.data(), vl.data(), vr.data(), &info, 1, 4, 1, 1);
  EXPECT_EQ(info, 0);
  EXPECT_NEAR(wr[0], 0.64686882783665856, 1e-14);
  EXPECT_EQ(wr[1], wr[0]);
  EXPECT_NEAR(wi[0], 2.8425986735005422, 1e-14);
  EXPECT_EQ(wi[1], -wi[0]);
  EXPECT_NEAR(wr[2], 3, 1e-14);
  EXPECT_NEAR(wr[3], 2.7062623443266807, 1e-14);
  EXPECT_EQ(wi[2], 0);
  EXPECT_EQ(wi[3], 0);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(vr[i * 4 + 1], std::conj(vr[i * 4])) << i;
    EXPECT_EQ(vl[i * 4 + 1], std::conj(vl[i * 4])) << i;
    EXPECT_EQ(vr[i * 4 + 2].imag(), 0);
    EXPECT_NEAR(vr[i * 4 + 2].real(), 0.5, 1e-14);  // (1, 1, 1, 1) / 2, sign included
  }
  EXPECT_NEAR(vr[3].real(), -0.493025, 1e-6);
  EXPECT_NEAR(vr[4].real(), 0.808542, 1e-6);  // the pair's largest component, made real with its sign
  Matrix m(4, 4);
  for (int64_t i = 0; i < 16; ++i) m.v[i] = a[i];
  std::vector<cd> w(4);
  for (int64_t i = 0; i < 4; ++i) w[i] = cd(wr[i], wi[i]);
  ExpectEigenvectors(m, w, vr, false, false, "right");
  ExpectEigenvectors(m, w, vl, true, false, "left");
  // Random real matrices: the same promises.
  for (int64_t n : {3, 6, 9}) {
    Matrix r = Random(n, n, false, static_cast<uint32_t>(50 + n));
    std::vector<double> rv(n * n), rwr(n), rwi(n);
    for (int64_t i = 0; i < n * n; ++i) rv[i] = r.v[i].real();
    std::vector<cd> rvl(n * n), rvr(n * n), rw(n);
    xlac_rt_eig_f64(rv.data(), rwr.data(), rwi.data(), rvl.data(), rvr.data(), &info, 1, n, 1, 1);
    EXPECT_EQ(info, 0);
    for (int64_t i = 0; i < n; ++i) {
      rw[i] = cd(rwr[i], rwi[i]);
      if (rwi[i] > 0) {
        ASSERT_LT(i + 1, n);
        EXPECT_EQ(rwr[i + 1], rwr[i]);
        EXPECT_EQ(rwi[i + 1], -rwi[i]);
      }
    }
    ExpectEigenvectors(r, rw, rvr, false, false, "right");
    ExpectEigenvectors(r, rw, rvl, true, false, "left");
  }
}

// Z unitary and A = Z T Z^H.
void ExpectSchur(const Matrix& a, const Matrix& t, const Matrix& z, const char* what) {
  ExpectOrthonormalColumns(z, what);
  EXPECT_LT(MaxDifference(Multiply(Multiply(z, t), Adjoint(z)), a), 1e-12) << what;
}

TEST(DecompositionKernels, SchurComplexAndReal) {
  const int64_t n = 7;
  {
    Matrix a = Random(n, n, true, 61), t(n, n), z(n, n);
    std::vector<cd> w(n);
    int32_t info = -1;
    xlac_rt_schur_c128(a.v.data(), t.v.data(), z.v.data(), w.data(), nullptr, &info, 1, n);
    EXPECT_EQ(info, 0);
    ExpectSchur(a, t, z, "complex");
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(w[i], t(i, i));
      for (int64_t j = 0; j < i; ++j) EXPECT_EQ(t(i, j), cd(0)) << i << "," << j;
    }
  }
  // Real Schur form, on a matrix with eigenvalues gebal isolates (row 3 and column 0) and complex pairs.
  Matrix a = Random(n, n, false, 62);
  for (int64_t j = 0; j < n; ++j) a(3, j) = j == 3 ? 2.0 : 0.0;
  for (int64_t i = 1; i < n; ++i) a(i, 0) = 0;
  std::vector<double> av(n * n), tv(n * n), zv(n * n), wr(n), wi(n);
  for (int64_t i = 0; i < n * n; ++i) av[i] = a.v[i].real();
  int32_t info = -1;
  xlac_rt_schur_f64(av.data(), tv.data(), zv.data(), wr.data(), wi.data(), &info, 1, n);
  EXPECT_EQ(info, 0);
  Matrix t(n, n), z(n, n);
  for (int64_t i = 0; i < n * n; ++i) t.v[i] = tv[i], z.v[i] = zv[i];
  ExpectSchur(a, t, z, "real");
  int pairs = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j + 1 < i; ++j) EXPECT_EQ(tv[i * n + j], 0) << i << "," << j;
    if (i + 1 < n && tv[(i + 1) * n + i] != 0) {
      // A standardized 2x2 block (dlanv2): equal diagonal, off-diagonals of opposite signs, wr +- i wi.
      ++pairs;
      const double p = tv[i * n + i], q = tv[i * n + i + 1], r = tv[(i + 1) * n + i], s = tv[(i + 1) * n + i + 1];
      EXPECT_EQ(p, s);
      EXPECT_LT(q * r, 0);
      EXPECT_EQ(wr[i], p);
      EXPECT_EQ(wr[i + 1], p);
      EXPECT_NEAR(wi[i], std::sqrt(-q * r), 1e-14);
      EXPECT_EQ(wi[i + 1], -wi[i]);
      if (i + 2 < n) EXPECT_EQ(tv[(i + 2) * n + i + 1], 0);
      ++i;
    } else {
      EXPECT_EQ(wr[i], tv[i * n + i]);
      EXPECT_EQ(wi[i], 0);
    }
  }
  EXPECT_GT(pairs, 0);
  // The isolated eigenvalues stay exact.
  EXPECT_NE(std::find(wr.begin(), wr.end(), 2.0), wr.end());
  EXPECT_NE(std::find(wr.begin(), wr.end(), a(0, 0).real()), wr.end());
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
  // eig and schur: LAPACK's types only; gehrd's low and high in range.
  for (auto [text, message] : {std::pair<std::string, std::string>{R"(
HloModule m
ENTRY e {
  a = bf16[3,3] parameter(0)
  ROOT s = (bf16[3,3], bf16[3,3], bf16[3], bf16[3], s32[]) custom-call(a), custom_call_target="xlac.schur"
})",
                                                                   "no eigenvalue kernel"},
                               {R"(
HloModule m
ENTRY e {
  a = f32[3,3] parameter(0)
  ROOT h = (f32[3,3], f32[2]) custom-call(a), custom_call_target="xlac.hessenberg", backend_config="2,4"
})",
                                "1 <= low <= high <= 3"},
                               {R"(
HloModule m
ENTRY e {
  a = f32[3,3] parameter(0)
  ROOT h = (c64[3], c64[3,3], c64[3,3], s32[]) custom-call(a), custom_call_target="xlac.eig"
})",
                                "(wr[..., n], wi[..., n], vl, vr, info)"}}) {
    module = ParseAndVerify(text);
    ASSERT_NE(module, nullptr);
    call = DecompositionCallOf(*module->entry_computation()->root());
    ASSERT_FALSE(call.ok()) << text;
    EXPECT_NE(call.status().message().find(message), std::string::npos) << call.status();
  }
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

// The calls of gtsv, sytrd / hetrd, gehrd, geev and gees compiled, on batches, against the interpreter.
TEST(DecompositionCalls, TridiagonalAndHessenbergCompiledMatchInterpreter) {
  for (const char* t : {"f32", "f64", "c64", "c128", "bf16"}) {
    const std::string type = t;
    const std::string real = type == "c64" ? "f32" : type == "c128" ? "f64" : type;
    std::string text = WithType(R"(
HloModule m
ENTRY e {
  dl = $T[2,5] parameter(0)
  d = $T[2,5] parameter(1)
  du = $T[2,5] parameter(2)
  b = $T[2,5,3]{1,2,0} parameter(3)
  a = $T[2,5,5]{1,2,0} parameter(4)
  solve = ($T[2,5], $T[2,5], $T[2,5], $T[2,5,3], s32[2]) custom-call(dl, d, du, b), custom_call_target="xlac.tridiagonal_solve"
  lower = ($T[2,5,5], $R[2,5], $R[2,4], $T[2,4]) custom-call(a), custom_call_target="xlac.tridiagonal", backend_config="1"
  upper = ($T[2,5,5], $R[2,5], $R[2,4], $T[2,4]) custom-call(a), custom_call_target="xlac.tridiagonal", backend_config="0"
  hess = ($T[2,5,5], $T[2,4]) custom-call(a), custom_call_target="xlac.hessenberg", backend_config="2,4"
  ROOT out = (($T[2,5], $T[2,5], $T[2,5], $T[2,5,3], s32[2]), ($T[2,5,5], $R[2,5], $R[2,4], $T[2,4]), ($T[2,5,5], $R[2,5], $R[2,4], $T[2,4]), ($T[2,5,5], $T[2,4])) tuple(solve, lower, upper, hess)
})",
                                type);
    for (size_t at; (at = text.find("$R")) != std::string::npos;) text.replace(at, 2, real);
    ExpectMatchesInterpreter(text);
  }
}

TEST(DecompositionCalls, EigAndSchurCompiledMatchInterpreter) {
  for (const char* t : {"f32", "f64"}) {
    const std::string type = t, complex = type == "f32" ? "c64" : "c128";
    std::string text = WithType(R"(
HloModule m
ENTRY e {
  a = $T[3,4,4]{1,2,0} parameter(0)
  eig = ($T[3,4], $T[3,4], $C[3,4,4], $C[3,4,4], s32[3]) custom-call(a), custom_call_target="xlac.eig", backend_config="1,1"
  right = ($T[3,4], $T[3,4], $C[3,4,4], $C[3,4,4], s32[3]) custom-call(a), custom_call_target="xlac.eig", backend_config="0,1"
  schur = ($T[3,4,4], $T[3,4,4], $T[3,4], $T[3,4], s32[3]) custom-call(a), custom_call_target="xlac.schur"
  ROOT out = (($T[3,4], $T[3,4], $C[3,4,4], $C[3,4,4], s32[3]), ($T[3,4], $T[3,4], $C[3,4,4], $C[3,4,4], s32[3]), ($T[3,4,4], $T[3,4,4], $T[3,4], $T[3,4], s32[3])) tuple(eig, right, schur)
})",
                                type);
    for (size_t at; (at = text.find("$C")) != std::string::npos;) text.replace(at, 2, complex);
    ExpectMatchesInterpreter(text);
  }
  for (const char* t : {"c64", "c128"}) {
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  a = $T[3,4,4]{1,2,0} parameter(0)
  eig = ($T[3,4], $T[3,4,4], $T[3,4,4], s32[3]) custom-call(a), custom_call_target="xlac.eig", backend_config="1,1"
  schur = ($T[3,4,4], $T[3,4,4], $T[3,4], s32[3]) custom-call(a), custom_call_target="xlac.schur"
  ROOT out = (($T[3,4], $T[3,4,4], $T[3,4,4], s32[3]), ($T[3,4,4], $T[3,4,4], $T[3,4], s32[3])) tuple(eig, schur)
})",
                                      t));
  }
}

}  // namespace
}  // namespace xlac::codegen::testing
