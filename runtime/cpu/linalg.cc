// cholesky and triangular-solve kernels shared by compiled code and the interpreter (xlac_runtime_kernels.h).
//
// Every element type is computed in complex<double> (real types with zero imaginary parts, so real and complex
// inputs follow one code path) and rounded to the element type once. bf16 and f16 convert exactly like the
// interpreter's Literal (ir/float_types.cc): NaN loads as a sign-keeping quiet NaN, stores round straight from
// double to nearest even, NaN to the default quiet NaN with its sign.
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/cpu/linalg_elements.h"
#include "runtime/cpu/xlac_runtime_kernels.h"

namespace {

using namespace xlac_rt_linalg;  // NOLINT: the element structs name the kernels' suffixes

// A = L L^H (lower) or U^H U (upper); the other triangle of the result is zero.
template <typename T>
void Cholesky(const void* a, void* result, int64_t batches, int64_t n, bool lower) {
  std::vector<cd> v = Load<T>(a, batches * n * n), out(v.size(), cd(0));
  for (int64_t b = 0; b < batches; ++b) {
    // Work on the lower factor; for upper, read A transposed (conjugated) and write the factor back transposed.
    auto in = [&](int64_t i, int64_t j) {
      return lower ? v[b * n * n + i * n + j] : std::conj(v[b * n * n + j * n + i]);
    };
    std::vector<cd> l(static_cast<size_t>(n * n), cd(0));
    for (int64_t j = 0; j < n; ++j) {
      cd d = in(j, j);
      for (int64_t k = 0; k < j; ++k) d -= l[j * n + k] * std::conj(l[j * n + k]);
      double diag = std::sqrt(d.real());  // NaN when the matrix is not positive definite
      l[j * n + j] = diag;
      for (int64_t i = j + 1; i < n; ++i) {
        cd s = in(i, j);
        for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * std::conj(l[j * n + k]);
        l[i * n + j] = s / diag;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        out[b * n * n + i * n + j] = lower ? l[i * n + j] : std::conj(l[j * n + i]);
      }
    }
  }
  Store<T>(result, out);
}

// Solves op(A) X = B (left_side) or X op(A) = B, using only the `lower` or upper triangle of A.
template <typename T>
void TriangularSolve(const void* a, const void* b, void* result, int64_t batches, int64_t m, int64_t rows, int64_t cols,
                     bool left, bool lower, bool unit, int32_t transpose) {
  bool trans = transpose == XLAC_RT_TRANSPOSE || transpose == XLAC_RT_ADJOINT;
  bool conj = transpose == XLAC_RT_ADJOINT;
  std::vector<cd> av = Load<T>(a, batches * m * m), bv = Load<T>(b, batches * rows * cols);
  for (int64_t bt = 0; bt < batches; ++bt) {
    // op(A)[i][j], reading only the stored triangle.
    auto op = [&](int64_t i, int64_t j) -> cd {
      int64_t r = trans ? j : i, c = trans ? i : j;
      if (r == c) return unit ? cd(1) : (conj ? std::conj(av[bt * m * m + r * m + c]) : av[bt * m * m + r * m + c]);
      if ((lower && c > r) || (!lower && c < r)) return 0;
      cd v = av[bt * m * m + r * m + c];
      return conj ? std::conj(v) : v;
    };
    bool op_lower = lower != trans;
    cd* x = bv.data() + bt * rows * cols;
    if (left) {
      // op(A) is m x m, X is m x cols.
      for (int64_t c = 0; c < cols; ++c) {
        for (int64_t step = 0; step < m; ++step) {
          int64_t i = op_lower ? step : m - 1 - step;
          cd s = x[i * cols + c];
          for (int64_t k = 0; k < m; ++k) {
            if ((op_lower && k < i) || (!op_lower && k > i)) s -= op(i, k) * x[k * cols + c];
          }
          x[i * cols + c] = s / op(i, i);
        }
      }
    } else {
      // X op(A) = B: X is rows x m; column j of X depends on the later (lower) or earlier (upper) columns.
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t step = 0; step < m; ++step) {
          int64_t j = op_lower ? m - 1 - step : step;
          cd s = x[r * cols + j];
          for (int64_t k = 0; k < m; ++k) {
            if ((op_lower && k > j) || (!op_lower && k < j)) s -= x[r * cols + k] * op(k, j);
          }
          x[r * cols + j] = s / op(j, j);
        }
      }
    }
  }
  Store<T>(result, bv);
}

}  // namespace

#define XLAC_RT_LINALG_KERNELS(suffix, T)                                                                             \
  void xlac_rt_cholesky_##suffix(const void* a, void* out, int64_t batches, int64_t n, int32_t lower) {               \
    Cholesky<T>(a, out, batches, n, lower != 0);                                                                      \
  }                                                                                                                   \
  void xlac_rt_triangular_solve_##suffix(const void* a, const void* b, void* x, int64_t batches, int64_t m,           \
                                         int64_t rows, int64_t cols, int32_t left_side, int32_t lower,                \
                                         int32_t unit_diagonal, int32_t transpose_a) {                                \
    TriangularSolve<T>(a, b, x, batches, m, rows, cols, left_side != 0, lower != 0, unit_diagonal != 0, transpose_a); \
  }

extern "C" {
XLAC_RT_LINALG_KERNELS(f32, F32)
XLAC_RT_LINALG_KERNELS(f64, F64)
XLAC_RT_LINALG_KERNELS(c64, C64)
XLAC_RT_LINALG_KERNELS(c128, C128)
XLAC_RT_LINALG_KERNELS(bf16, Half<kBF16>)
XLAC_RT_LINALG_KERNELS(f16, Half<kF16>)
}  // extern "C"
