// fft, triangular-solve and cholesky compiled as calls to the runtime's library kernels
// (runtime/cpu/xlac_runtime_kernels.h), checked bit for bit against the interpreter, which calls the same kernels;
// plus direct checks of the kernels themselves (known values, and the bf16/f16 rounding against ir/float_types).
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "ir/float_types.h"
#include "runtime/cpu/xlac_runtime_kernels.h"

namespace xlac::codegen::testing {
namespace {

std::string Dims(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s;
}

// An fft module; `dims` are the logical (complex or real) transform dims, the first ones batch dimensions.
std::string FftModule(const std::string& type, bool f64, const std::vector<int64_t>& batch,
                      const std::vector<int64_t>& lengths, const std::string& layout = "") {
  std::string c = f64 ? "c128" : "c64", r = f64 ? "f64" : "f32";
  std::vector<int64_t> full = batch, half = batch;
  full.insert(full.end(), lengths.begin(), lengths.end());
  half.insert(half.end(), lengths.begin(), lengths.end());
  half.back() = lengths.back() / 2 + 1;
  std::string in, out;
  if (type == "FFT" || type == "IFFT") {
    in = out = c + "[" + Dims(full) + "]";
  } else if (type == "RFFT") {
    in = r + "[" + Dims(full) + "]";
    out = c + "[" + Dims(half) + "]";
  } else {
    in = c + "[" + Dims(half) + "]";
    out = r + "[" + Dims(full) + "]";
  }
  return "HloModule m\nENTRY e {\n  x = " + in + layout + " parameter(0)\n  ROOT f = " + out +
         " fft(x), fft_type=" + type + ", fft_length={" + Dims(lengths) + "}\n}\n";
}

TEST(CodegenFft, EveryTypeRankAndPrecision) {
  const std::vector<std::vector<int64_t>> lengths = {{6}, {5, 4}, {3, 4, 5}};
  for (const char* type : {"FFT", "IFFT", "RFFT", "IRFFT"}) {
    for (bool f64 : {false, true}) {
      for (const std::vector<int64_t>& l : lengths) {
        ExpectMatchesInterpreter(FftModule(type, f64, {2}, l));
      }
    }
  }
}

TEST(CodegenFft, BatchesAndOddSizes) {
  ExpectMatchesInterpreter(FftModule("FFT", false, {2, 3}, {7}));
  ExpectMatchesInterpreter(FftModule("IRFFT", false, {3}, {7}));
  ExpectMatchesInterpreter(FftModule("IRFFT", true, {2}, {1, 8}));
  ExpectMatchesInterpreter(FftModule("RFFT", true, {}, {9}));
  ExpectMatchesInterpreter(FftModule("FFT", true, {}, {1}));
}

TEST(CodegenFft, NonDefaultLayouts) {
  ExpectMatchesInterpreter(FftModule("FFT", false, {3}, {4, 5}, "{0,1,2}"));
  ExpectMatchesInterpreter(FftModule("RFFT", false, {3}, {6}, "{0,1}"));
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = c64[2,4,6] parameter(0)
  ROOT f = c64[2,4,6]{1,0,2} fft(x), fft_type=IFFT, fft_length={4,6}
})");
}

std::string TriangularSolveModule(const std::string& type, bool left, bool lower, bool unit, const std::string& trans,
                                  const std::string& a_layout = "") {
  std::string b = left ? "[2,4,3]" : "[2,3,4]";
  return "HloModule m\nENTRY e {\n  a = " + type + "[2,4,4]" + a_layout + " parameter(0)\n  b = " + type + b +
         " parameter(1)\n  ROOT x = " + type + b + " triangular-solve(a, b), left_side=" + (left ? "true" : "false") +
         ", lower=" + (lower ? "true" : "false") + ", unit_diagonal=" + (unit ? "true" : "false") +
         ", transpose_a=" + trans + "\n}\n";
}

TEST(CodegenTriangularSolve, EveryCombination) {
  for (bool left : {false, true}) {
    for (bool lower : {false, true}) {
      for (bool unit : {false, true}) {
        for (const char* trans : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
          ExpectMatchesInterpreter(TriangularSolveModule("f32", left, lower, unit, trans));
          ExpectMatchesInterpreter(TriangularSolveModule("c64", left, lower, unit, trans));
        }
      }
    }
  }
}

TEST(CodegenTriangularSolve, ElementTypes) {
  for (const char* type : {"f64", "c128", "bf16", "f16"}) {
    ExpectMatchesInterpreter(TriangularSolveModule(type, true, true, false, "NO_TRANSPOSE"));
    ExpectMatchesInterpreter(TriangularSolveModule(type, false, false, false, "ADJOINT"));
  }
}

TEST(CodegenTriangularSolve, NonDefaultLayout) {
  ExpectMatchesInterpreter(TriangularSolveModule("f32", true, false, false, "TRANSPOSE", "{1,2,0}"));
}

// Batches of Hermitian positive definite matrices (diagonally dominant), with a per-element perturbation.
Literal PositiveDefinite(PrimitiveType type, int64_t batches, int64_t n) {
  Literal lit(Shape::Array(type, {batches, n, n}));
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t k = (b * n + i) * n + j;
        double re = i == j ? n + 1.0 + 0.37 * b : 1.0 / (1.0 + i + j) + 0.01 * b;
        double im = i == j ? 0 : 0.1 * static_cast<double>(i - j);
        if (type == PrimitiveType::kC64) {
          lit.Set<std::complex<float>>(k, {static_cast<float>(re), static_cast<float>(im)});
        } else if (type == PrimitiveType::kC128) {
          lit.Set<std::complex<double>>(k, {re, im});
        } else {
          lit.SetFromDouble(k, re);
        }
      }
    }
  }
  return lit;
}

TEST(CodegenCholesky, LowerAndUpper) {
  for (const char* type : {"f32", "f64", "c64", "c128", "bf16", "f16"}) {
    for (bool lower : {false, true}) {
      std::string text = WithType(std::string("HloModule m\nENTRY e {\n  a = $T[3,5,5] parameter(0)\n  ROOT c = "
                                              "$T[3,5,5] cholesky(a), lower=") +
                                      (lower ? "true" : "false") + "\n}\n",
                                  type);
      std::unique_ptr<Module> module = ParseAndVerify(text);
      ASSERT_NE(module, nullptr);
      std::vector<Literal> args;
      args.push_back(PositiveDefinite(module->entry_computation()->parameter(0)->shape().element_type, 3, 5));
      ExpectMatchesInterpreter(text, std::move(args));
    }
  }
}

TEST(CodegenCholesky, NotPositiveDefiniteGivesTheSameNaNs) {
  // Random matrices: the factorization breaks down into NaNs, which must match bit for bit too.
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  a = f32[2,6,6] parameter(0)
  ROOT c = f32[2,6,6] cholesky(a), lower=true
})");
}

TEST(CodegenCholesky, NonDefaultLayout) {
  std::string text = R"(
HloModule m
ENTRY e {
  a = f64[3,5,5]{1,2,0} parameter(0)
  ROOT c = f64[3,5,5]{0,1,2} cholesky(a), lower=false
})";
  std::vector<Literal> args;
  args.push_back(PositiveDefinite(PrimitiveType::kF64, 3, 5));
  ExpectMatchesInterpreter(text, std::move(args));
}

// ---- the kernels called directly ----

TEST(LibraryKernels, FftKnownValues) {
  std::vector<std::complex<float>> x = {{1, 0}, {2, 0}, {3, 0}, {4, 0}}, y(4);
  int64_t dims[] = {4}, length[] = {4};
  ASSERT_EQ(xlac_rt_fft_c64(x.data(), y.data(), XLAC_RT_FFT, 1, dims, dims, 1, length), 0);
  std::vector<std::complex<float>> want = {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(y[i].real(), want[i].real(), 1e-6) << i;
    EXPECT_NEAR(y[i].imag(), want[i].imag(), 1e-6) << i;
  }
  EXPECT_NE(xlac_rt_fft_c64(x.data(), y.data(), 7, 1, dims, dims, 1, length), 0);
  EXPECT_NE(xlac_rt_fft_c64(x.data(), y.data(), XLAC_RT_FFT, 1, dims, dims, 2, length), 0);
}

TEST(LibraryKernels, CholeskyAndSolveKnownValues) {
  // [[4, 2], [2, 5]] = L L^T with L = [[2, 0], [1, 2]].
  double a[] = {4, 2, 2, 5}, l[4];
  xlac_rt_cholesky_f64(a, l, 1, 2, 1);
  EXPECT_EQ(std::vector<double>(l, l + 4), (std::vector<double>{2, 0, 1, 2}));
  // L x = [2, 5] -> x = [1, 2], written over the right-hand side.
  double b[] = {2, 5};
  xlac_rt_triangular_solve_f64(l, b, b, 1, 2, 2, 1, /*left_side=*/1, /*lower=*/1, 0, XLAC_RT_NO_TRANSPOSE);
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[1], 2);
}

// x / 3 rounded by the kernel must equal the interpreter's double -> narrow rounding, for every bit pattern.
TEST(LibraryKernels, NarrowRoundingMatchesLiteral) {
  for (PrimitiveType type : {PrimitiveType::kBF16, PrimitiveType::kF16}) {
    std::vector<uint16_t> b(65536), x(65536), a(65536, 0);
    for (int i = 0; i < 65536; ++i) b[i] = static_cast<uint16_t>(i);
    uint64_t three = DoubleToFloatBits(type, 3.0);
    for (int i = 0; i < 65536; ++i) a[i] = static_cast<uint16_t>(three);
    if (type == PrimitiveType::kBF16) {
      xlac_rt_triangular_solve_bf16(a.data(), b.data(), x.data(), 65536, 1, 1, 1, 1, 1, 0, 0);
    } else {
      xlac_rt_triangular_solve_f16(a.data(), b.data(), x.data(), 65536, 1, 1, 1, 1, 1, 0, 0);
    }
    int mismatches = 0;
    for (int i = 0; i < 65536 && mismatches < 5; ++i) {
      // The kernels solve in complex<double>, where (-0 + 0i) / 3 is +0: zeros are not about rounding.
      if ((i & 0x7fff) == 0) continue;
      uint64_t want = DoubleToFloatBits(type, FloatBitsToDouble(type, static_cast<uint64_t>(i)) / 3.0);
      if (want != x[i]) {
        ++mismatches;
        ADD_FAILURE() << PrimitiveTypeName(type) << " bits 0x" << std::hex << i << ": want 0x" << want << " got 0x"
                      << x[i];
      }
    }
  }
}

}  // namespace
}  // namespace xlac::codegen::testing
