// Internal to the runtime: the pieces of the Winograd F(4x4, 3x3) kernels that the separate transforms
// (winograd.cc) and the fused convolution (winograd_conv.cc) share, and the portable per-tile transforms. Every
// vector function here needs AVX-512F at run time (HasAvx512()); the runtime is compiled for generic x86-64.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "runtime/cpu/internal.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define XLAC_WINOGRAD_AVX512 1
#include <immintrin.h>
#endif

namespace xlac::rt::winograd {

constexpr int kMaxN = 8;

// The transforms of one tile, one element at a time (the portable code; the same fused steps in the same order as
// the vector code).
void InputTilePortable(const WinogradInputArgs& p, const float* plane, int64_t ty, int64_t tx, float* out);
// mm[(a * n + b) * point_stride] is the tile's value at transform point (a, b).
void OutputTilePortable(const WinogradOutputArgs& p, const float* mm, int64_t point_stride, float* plane, int64_t ty,
                        int64_t tx);

#ifdef XLAC_WINOGRAD_AVX512

bool HasAvx512();

inline __mmask16 FirstLanes(int64_t lanes) { return static_cast<__mmask16>(lanes >= 16 ? 0xffff : (1u << lanes) - 1); }

// F(4x4, 3x3), the form the pass emits, with B^T and A^T known at compile time (ir/winograd.cc's matrices for m = 4;
// the callers check that bt / at hold exactly these, anything else takes the generic code above). The same fused
// steps in the same order as CombineVec, bit for bit, but without the run-time zero tests, which cost branches or
// mask computations at every step and kept the generic kernels at 3-4 ms per ResNet-block transform (~10x what
// their arithmetic needs; V's 14.4 MB are written in ~0.4 ms on this machine).
constexpr float kBt4[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                              {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
constexpr float kAt4[4][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};

// Row `R` of `Matrix` applied to in[0], in[step], ...: +0, then one fused multiply-add per nonzero coefficient in
// order (the zero ones are dropped by the compiler: the coefficients are constants).
template <const auto& Matrix, int R, int... K>
__attribute__((target("avx512f"), always_inline)) inline __m512 CombineConst(const __m512* in, int step,
                                                                             std::integer_sequence<int, K...>) {
  __m512 acc = _mm512_setzero_ps();
  ((Matrix[R][K] != 0.0f ? void(acc = _mm512_fmadd_ps(_mm512_set1_ps(Matrix[R][K]), in[K * step], acc)) : void()), ...);
  return acc;
}

// out[r * out_step] = row r of `Matrix` applied to `in` (at `step`), for every row r.
template <const auto& Matrix, int Rows, int... R>
__attribute__((target("avx512f"), always_inline)) inline void ApplyConst(const __m512* in, int step, __m512* out,
                                                                         int out_step,
                                                                         std::integer_sequence<int, R...>) {
  ((out[R * out_step] = CombineConst<Matrix, R>(in, step, std::make_integer_sequence<int, 6>{})), ...);
}
template <const auto& Matrix, int Rows>
__attribute__((target("avx512f"), always_inline)) inline void ApplyConst(const __m512* in, int step, __m512* out,
                                                                         int out_step) {
  ApplyConst<Matrix, Rows>(in, step, out, out_step, std::make_integer_sequence<int, Rows>{});
}

// CombineConst for a row given by reference: constant-folded the same way once the caller's loops are unrolled
// (r known), which a template argument cannot express inside them.
__attribute__((target("avx512f"), always_inline)) inline __m512 CombineRow(const float (&coef)[6], const __m512* in) {
  __m512 acc = _mm512_setzero_ps();
#pragma clang loop unroll(full)
  for (int k = 0; k < 6; ++k) {
    if (coef[k] != 0.0f) acc = _mm512_fmadd_ps(_mm512_set1_ps(coef[k]), in[k], acc);
  }
  return acc;
}

inline bool IsF4(const float* matrix, const float* constants, int rows) {
  return std::memcmp(matrix, constants, static_cast<size_t>(rows) * 6 * sizeof(float)) == 0;
}

// The lanes j of a 16-lane load at position s of a row whose positions [lo, hi) hold data (zero elsewhere).
inline __mmask16 RangeMask(int64_t s, int64_t lo, int64_t hi) {
  const int64_t a = std::clamp<int64_t>(lo - s, 0, 16), b = std::clamp<int64_t>(hi - s, 0, 16);
  return b <= a ? 0 : static_cast<__mmask16>(((1u << b) - 1) & ~((1u << a) - 1));
}

// Every cache line of [p, p + bytes) towards L1 (a hint: addresses are never dereferenced).
inline void Prefetch(const void* p, int64_t bytes) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63}, end = reinterpret_cast<uintptr_t>(p) + bytes;
  for (uintptr_t line = begin; line < end; line += 64) _mm_prefetch(reinterpret_cast<const char*>(line), _MM_HINT_T0);
}

// Positions [s, s + 16) of a row whose position w is at address base + 4 w, zero outside [lo, hi) (masked lanes
// are not read).
__attribute__((target("avx512f"))) inline __m512 LoadRange(uintptr_t base, int64_t lo, int64_t hi, int64_t s) {
  return _mm512_maskz_loadu_ps(RangeMask(s, lo, hi), reinterpret_cast<const float*>(base + s * 4));
}

// The first `count` lanes of `v` to dst[0], dst[stride], ... (kept out of line: rare, and unrolled copies of it
// bloated the hot loops).
__attribute__((target("avx512f"))) void StoreStrided(__m512 v, float* dst, int64_t count, int64_t stride);

// The permutes that move F(4x4) tiles between "one tile per lane" and image columns.
struct F4Lanes {
  // Lane j of X_l (l < 4) is position 64 c + 4 j + l of a row: lanes 0-7 from the chunk's vectors 0 and 1, lanes
  // 8-15 from 2 and 3, both by the same two-source index (4 j + l) mod 32.
  __m512i pick[4];
  // Image vector o, lane i is column q = i % 4 of tile 4 o + i / 4: from out[0] / out[1] (q < 2) or out[2] / out[3].
  __m512i spread[4];
  __attribute__((target("avx512f"))) F4Lanes() {
    for (int l = 0; l < 4; ++l) {
      alignas(64) int32_t index[16];
      for (int j = 0; j < 16; ++j) index[j] = (4 * j + l) % 32;
      pick[l] = _mm512_load_si512(index);
    }
    for (int o = 0; o < 4; ++o) {
      alignas(64) int32_t index[16];
      for (int i = 0; i < 16; ++i) index[i] = (i % 2) * 16 + 4 * o + i / 4;
      spread[o] = _mm512_load_si512(index);
    }
  }
};

// The transform along columns of one image row for every chunk of 16 tiles of a tile row: the six columns 4j + l
// (l = 0..5) each tile reads become six vectors (lane j = tile j) by two-source permutes of the chunk's first four
// vectors and a one-lane shift for l = 4, 5, then B^T: hr[b * chunks + c] for b = 0..5. The row's position w is at
// address base + 4 w and holds data in [lo, hi) (zero elsewhere; masked lanes are not read).
__attribute__((target("avx512f"), always_inline)) inline void InputRowF4(const F4Lanes& lanes, uintptr_t base,
                                                                         int64_t lo, int64_t hi, int64_t chunks,
                                                                         __m512* hr) {
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t s = 64 * c;
    const __m512 v0 = LoadRange(base, lo, hi, s), v1 = LoadRange(base, lo, hi, s + 16),
                 v2 = LoadRange(base, lo, hi, s + 32), v3 = LoadRange(base, lo, hi, s + 48);
    __m512 x[6];
    for (int l = 0; l < 4; ++l) {
      x[l] = _mm512_mask_blend_ps(0xff00, _mm512_permutex2var_ps(v0, lanes.pick[l], v1),
                                  _mm512_permutex2var_ps(v2, lanes.pick[l], v3));
    }
    // X_4 (X_5) is X_0 (X_1) one tile on: lanes 1-15 of it, then position 64 (65).
    x[4] = _mm512_castsi512_ps(
        _mm512_alignr_epi32(_mm512_castps_si512(LoadRange(base, lo, hi, s + 64)), _mm512_castps_si512(x[0]), 1));
    x[5] = _mm512_castsi512_ps(
        _mm512_alignr_epi32(_mm512_castps_si512(LoadRange(base, lo, hi, s + 65)), _mm512_castps_si512(x[1]), 1));
    ApplyConst<kBt4, 6>(x, 1, hr + c, static_cast<int>(chunks));
  }
}

// The output transform of 16 tiles of a tile row (one feature): their 36 values at src[(a * 6 + b) * point_stride]
// (16 floats each, lane j = tile j), the transform along rows, then per output row the transform along columns,
// interleaved into image columns by two two-source permutes and a blend per image vector. dst points at the first
// tile's top-left output; `cols` output columns (<= 64) and `out_rows` rows (<= 4) are written. Contiguous: y's
// columns are adjacent (col_stride 1).
template <bool Contiguous>
__attribute__((target("avx512f"), always_inline)) inline void OutputTileRowF4(const F4Lanes& lanes, const float* src,
                                                                              int64_t point_stride, float* dst,
                                                                              int64_t row_stride, int64_t col_stride,
                                                                              int64_t cols, int64_t out_rows) {
  constexpr int N = 6, m = 4;
  // Per output row r: its n values of the transform along rows, then the transform along columns; everything
  // unrolled so that the few live vectors stay in registers (all 24 of the transform along rows at once, or indexed
  // arrays in loops, were spilled to the stack).
#pragma clang loop unroll(full)
  for (int r = 0; r < m; ++r) {
    if (r >= out_rows) break;
    __m512 s[N];
#pragma clang loop unroll(full)
    for (int b = 0; b < N; ++b) {
      __m512 values[N];
#pragma clang loop unroll(full)
      for (int a = 0; a < N; ++a) {
        // Only the loads whose coefficient is nonzero survive (CombineConst never reads the others).
        values[a] = kAt4[r][a] != 0.0f ? _mm512_loadu_ps(src + (a * N + b) * point_stride) : _mm512_setzero_ps();
      }
      s[b] = CombineRow(kAt4[r], values);
    }
    __m512 out[m];
    ApplyConst<kAt4, m>(s, 1, out, 1);
    float* dst_row = dst + r * row_stride;
#pragma clang loop unroll(full)
    for (int o = 0; o < m; ++o) {
      const int64_t count = cols - 16 * o;
      if (count <= 0) break;
      const __m512 low = _mm512_permutex2var_ps(out[0], lanes.spread[o], out[1]);
      const __m512 high = _mm512_permutex2var_ps(out[2], lanes.spread[o], out[3]);
      const __m512 columns = _mm512_mask_blend_ps(0xcccc, low, high);
      if constexpr (Contiguous) {
        if (count >= 16) {
          _mm512_storeu_ps(dst_row + 16 * o, columns);
        } else {
          _mm512_mask_storeu_ps(dst_row + 16 * o, FirstLanes(count), columns);
        }
      } else {
        StoreStrided(columns, dst_row + 16 * o * col_stride, std::min<int64_t>(count, 16), col_stride);
      }
    }
  }
}

#endif  // XLAC_WINOGRAD_AVX512

}  // namespace xlac::rt::winograd
