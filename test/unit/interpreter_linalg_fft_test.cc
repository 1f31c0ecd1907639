// fft (FFT/IFFT/RFFT/IRFFT, 1-D and 2-D), cholesky, triangular-solve and batch-norm against hand-computed values.
#include "interpreter_test_util.h"

namespace xlac::interp::testing {
namespace {

constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType C64 = PrimitiveType::kC64;

Literal Complex(std::vector<int64_t> dims, const std::vector<c64>& values) {
  Literal lit(Shape::Array(C64, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) lit.Set<c64>(static_cast<int64_t>(i), values[i]);
  return lit;
}

void ExpectNear(const Literal& lit, const std::vector<c64>& want) {
  ASSERT_EQ(lit.element_count(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    c64 got = lit.Get<c64>(static_cast<int64_t>(i));
    EXPECT_NEAR(got.real(), want[i].real(), 1e-5) << i;
    EXPECT_NEAR(got.imag(), want[i].imag(), 1e-5) << i;
  }
}

TEST(InterpreterFft, OneDimensional) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal f, RunHlo(R"(
HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  ROOT f = c64[4] fft(x), fft_type=FFT, fft_length={4}
})",
                                              {Complex({4}, {{1, 0}, {2, 0}, {3, 0}, {4, 0}})}));
  ExpectNear(f, {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}});
  XLAC_ASSERT_OK_AND_ASSIGN(Literal i, RunHlo(R"(
HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  ROOT f = c64[4] fft(x), fft_type=IFFT, fft_length={4}
})",
                                              {Complex({4}, {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}})}));
  ExpectNear(i, {{1, 0}, {2, 0}, {3, 0}, {4, 0}});
}

TEST(InterpreterFft, RealTransforms) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT f = c64[3] fft(x), fft_type=RFFT, fft_length={4}
})",
                                              {Vec(F32, {1, 2, 3, 4})}));
  ExpectNear(r, {{10, 0}, {-2, 2}, {-2, 0}});
  XLAC_ASSERT_OK_AND_ASSIGN(Literal ir, RunHlo(R"(
HloModule m
ENTRY e {
  x = c64[3] parameter(0)
  ROOT f = f32[4] fft(x), fft_type=IRFFT, fft_length={4}
})",
                                               {Complex({3}, {{10, 0}, {-2, 2}, {-2, 0}})}));
  std::vector<double> v = Doubles(ir);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(v[k], k + 1, 1e-5);
  // Odd length: IRFFT of RFFT round-trips.
  XLAC_ASSERT_OK_AND_ASSIGN(Literal odd, RunHlo(R"(
HloModule m
ENTRY e {
  x = f32[2,5] parameter(0)
  f = c64[2,3] fft(x), fft_type=RFFT, fft_length={5}
  ROOT g = f32[2,5] fft(f), fft_type=IRFFT, fft_length={5}
})",
                                                {Arr(F32, {2, 5}, {1, -2, 3, 0.5, 7, 0, 0, 1, 0, 0})}));
  std::vector<double> o = Doubles(odd);
  std::vector<double> want = {1, -2, 3, 0.5, 7, 0, 0, 1, 0, 0};
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(o[k], want[k], 1e-5);
}

TEST(InterpreterFft, TwoDimensional) {
  // 2-D FFT of [[1,2],[3,4]]: [[10,-2],[-4,0]].
  XLAC_ASSERT_OK_AND_ASSIGN(Literal f, RunHlo(R"(
HloModule m
ENTRY e {
  x = c64[2,2] parameter(0)
  ROOT f = c64[2,2] fft(x), fft_type=FFT, fft_length={2,2}
})",
                                              {Complex({2, 2}, {{1, 0}, {2, 0}, {3, 0}, {4, 0}})}));
  ExpectNear(f, {{10, 0}, {-2, 0}, {-4, 0}, {0, 0}});
  XLAC_ASSERT_OK_AND_ASSIGN(Literal rt, RunHlo(R"(
HloModule m
ENTRY e {
  x = f32[3,4] parameter(0)
  f = c64[3,3] fft(x), fft_type=RFFT, fft_length={3,4}
  ROOT g = f32[3,4] fft(f), fft_type=IRFFT, fft_length={3,4}
})",
                                               {Arr(F32, {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})}));
  std::vector<double> v = Doubles(rt);
  for (int k = 0; k < 12; ++k) EXPECT_NEAR(v[k], k + 1, 1e-4);
}

// The runtime's transforms (shared with compiled code) against direct sums in long double, for lengths that take
// every path: powers of two, mixed radices, small primes summed directly, and primes above the direct limit (and a
// length with such a factor) that go through Bluestein's convolution. c128, so the error is visible far below f32's.
TEST(InterpreterFft, FastTransformsMatchDirectSums) {
  for (int64_t n : {1, 2, 3, 5, 8, 12, 30, 49, 61, 64, 67, 97, 128, 134, 210, 256, 331, 1000, 1024}) {
    for (const char* type : {"FFT", "IFFT"}) {
      Literal x(Shape::Array(PrimitiveType::kC128, {2, n}));
      for (int64_t i = 0; i < 2 * n; ++i) {
        x.Set<c128>(i, c128(std::sin(0.7 * static_cast<double>(i) + 0.3), std::cos(1.3 * static_cast<double>(i))));
      }
      XLAC_ASSERT_OK_AND_ASSIGN(Literal y, RunHlo(fmt::format(R"(
HloModule m
ENTRY e {{
  x = c128[2,{0}] parameter(0)
  ROOT f = c128[2,{0}] fft(x), fft_type={1}, fft_length={{{0}}}
}})",
                                                              n, type),
                                                  {Literal(x)}));
      const long double sign = std::string_view(type) == "FFT" ? -1 : 1;
      const long double kTwoPi = 6.283185307179586476925286766559005768L;
      for (int64_t row = 0; row < 2; ++row) {
        for (int64_t k = 0; k < n; ++k) {
          std::complex<long double> acc = 0;
          for (int64_t j = 0; j < n; ++j) {
            const long double angle =
                sign * kTwoPi * static_cast<long double>((j * k) % n) / static_cast<long double>(n);
            const c128 v = x.Get<c128>(row * n + j);
            acc += std::complex<long double>(v.real(), v.imag()) *
                   std::complex<long double>(std::cos(angle), std::sin(angle));
          }
          if (sign > 0) acc /= static_cast<long double>(n);
          const c128 got = y.Get<c128>(row * n + k);
          const double scale = std::sqrt(static_cast<double>(n)) + 1;
          EXPECT_NEAR(got.real(), static_cast<double>(acc.real()), 1e-14 * scale) << type << " n=" << n << " k=" << k;
          EXPECT_NEAR(got.imag(), static_cast<double>(acc.imag()), 1e-14 * scale) << type << " n=" << n << " k=" << k;
        }
      }
    }
  }
}

TEST(InterpreterLinalg, Cholesky) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal l, RunHlo(R"(
HloModule m
ENTRY e {
  a = f32[2,2] parameter(0)
  ROOT c = f32[2,2] cholesky(a), lower=true
})",
                                              {Arr(F32, {2, 2}, {4, 2, 2, 3})}));
  std::vector<double> v = Doubles(l);
  EXPECT_NEAR(v[0], 2, 1e-6);
  EXPECT_EQ(v[1], 0);
  EXPECT_NEAR(v[2], 1, 1e-6);
  EXPECT_NEAR(v[3], std::sqrt(2.0), 1e-6);
  XLAC_ASSERT_OK_AND_ASSIGN(Literal u, RunHlo(R"(
HloModule m
ENTRY e {
  a = f32[2,2] parameter(0)
  ROOT c = f32[2,2] cholesky(a), lower=false
})",
                                              {Arr(F32, {2, 2}, {4, 2, 2, 3})}));
  std::vector<double> w = Doubles(u);
  EXPECT_NEAR(w[0], 2, 1e-6);
  EXPECT_NEAR(w[1], 1, 1e-6);
  EXPECT_EQ(w[2], 0);
  EXPECT_NEAR(w[3], std::sqrt(2.0), 1e-6);
}

TEST(InterpreterLinalg, TriangularSolve) {
  // Left, lower: [[2,0],[1,1]] x = [[2],[3]] -> x = [[1],[2]]. The upper triangle (99) is ignored.
  XLAC_ASSERT_OK_AND_ASSIGN(Literal x, RunHlo(R"(
HloModule m
ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[2,1] parameter(1)
  ROOT x = f32[2,1] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
})",
                                              {Arr(F32, {2, 2}, {2, 99, 1, 1}), Arr(F32, {2, 1}, {2, 3})}));
  EXPECT_EQ(Doubles(x), (std::vector<double>{1, 2}));
  // Left, lower, transposed: [[2,1],[0,1]] x = [[4],[2]] -> x = [[1],[2]].
  XLAC_ASSERT_OK_AND_ASSIGN(Literal xt, RunHlo(R"(
HloModule m
ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[2,1] parameter(1)
  ROOT x = f32[2,1] triangular-solve(a, b), left_side=true, lower=true, transpose_a=TRANSPOSE
})",
                                               {Arr(F32, {2, 2}, {2, 99, 1, 1}), Arr(F32, {2, 1}, {4, 2})}));
  EXPECT_EQ(Doubles(xt), (std::vector<double>{1, 2}));
  // Right, upper, unit diagonal: x [[1,3],[0,1]] = [[1,5]] -> x = [[1,2]].
  XLAC_ASSERT_OK_AND_ASSIGN(Literal xr, RunHlo(R"(
HloModule m
ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[1,2] parameter(1)
  ROOT x = f32[1,2] triangular-solve(a, b), left_side=false, lower=false, unit_diagonal=true, transpose_a=NO_TRANSPOSE
})",
                                               {Arr(F32, {2, 2}, {7, 3, 99, 7}), Arr(F32, {1, 2}, {1, 5})}));
  EXPECT_EQ(Doubles(xr), (std::vector<double>{1, 2}));
}

TEST(InterpreterLinalg, QrCustomCallsFollowLapack) {
  // geqrf of [[3,1],[4,2]]: R = [[-5,-2.2],[0,0.4]], v_0 = (1, 0.5), tau = (1.6, 0); orgqr gives Q with Q R = A.
  XLAC_ASSERT_OK_AND_ASSIGN(Literal qr, RunHlo(R"(
HloModule m
ENTRY e {
  a = f32[1,2,2] parameter(0)
  qr = (f32[1,2,2], f32[1,2]) custom-call(a), custom_call_target="Qr"
  r = f32[1,2,2] get-tuple-element(qr), index=0
  taus = f32[1,2] get-tuple-element(qr), index=1
  q = f32[1,2,2] custom-call(r, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
  ROOT t = (f32[1,2,2], f32[1,2], f32[1,2,2]) tuple(r, taus, q)
})",
                                               {Arr(F32, {1, 2, 2}, {3, 1, 4, 2})}));
  auto near = [](const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i;
  };
  near(Doubles(qr.tuple_elements()[0]), {-5, -2.2, 0.5, 0.4});
  near(Doubles(qr.tuple_elements()[1]), {1.6, 0});
  near(Doubles(qr.tuple_elements()[2]), {-0.6, -0.8, -0.8, 0.6});
}

TEST(InterpreterBatchNorm, TrainingAndInference) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal t, RunHlo(R"(
HloModule m
ENTRY e {
  x = f32[2,2] parameter(0)
  scale = f32[2] parameter(1)
  offset = f32[2] parameter(2)
  ROOT b = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, scale, offset), epsilon=0, feature_index=1
})",
                                              {Arr(F32, {2, 2}, {1, 10, 3, 30}), Vec(F32, {1, 2}), Vec(F32, {0, 1})}));
  EXPECT_EQ(Doubles(t.tuple_elements()[1]), (std::vector<double>{2, 20}));   // means
  EXPECT_EQ(Doubles(t.tuple_elements()[2]), (std::vector<double>{1, 100}));  // biased variances
  EXPECT_EQ(Doubles(t.tuple_elements()[0]), (std::vector<double>{-1, -1, 1, 3}));
  XLAC_ASSERT_OK_AND_ASSIGN(
      Literal i, RunHlo(R"(
HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  scale = f32[2] parameter(1)
  offset = f32[2] parameter(2)
  mean = f32[2] parameter(3)
  var = f32[2] parameter(4)
  ROOT b = f32[2] batch-norm-inference(x, scale, offset, mean, var), epsilon=0, feature_index=0
})",
                        {Vec(F32, {3, 3}), Vec(F32, {2, 1}), Vec(F32, {1, 0}), Vec(F32, {1, 5}), Vec(F32, {4, 1})}));
  EXPECT_EQ(Doubles(i), (std::vector<double>{3, -2}));
}

}  // namespace
}  // namespace xlac::interp::testing
