// The Winograd F(m x m, 3 x 3) input and output transforms (ir/winograd.h defines them and their order of
// operations; runtime/interpreter/winograd.cc evaluates the same, bit for bit).
//
// Work units are channels (input) and features (output), each over every image, split across the device's threads.
// With AVX-512 (checked at run time: the runtime is compiled for generic x86-64) 16 tiles of a tile row are one
// vector, one tile per lane: the input transform along columns runs on contiguous loads of a zero-padded copy of the
// image row at all of its columns and picks every m-th with in-register permutes; the transform along rows and the
// stores into V's n^2 rows are whole vectors. The output transform loads M's rows whole and spreads each output row
// of 16 tiles back into image columns the same way. No gathers or scatters: on this Zen 5 they cost ~50 cycles each
// (a first version with one gather per tile input took 5.5 ms per ResNet-block input transform), and masked stores
// next to gathers stalled too. One image's tiles go through a staging row per transform point, so that V (M) is
// written (read) one row at a time. Images with strided columns (NHWC) copy rows in and out element by element.
// For F(4x4, 3x3) (what the pass emits) the kernels are specialized: B^T and A^T are compile-time constants (no zero
// tests per step) and the input transform gathers each tile's six columns by permutes instead of transforming all
// columns and picking every 4th (InputChannelF4, OutputFeatureF4).
// Elsewhere the portable code does the same arithmetic one tile at a time.
//
// Every step of a 1-D transform is one fused multiply-add (std::fma, _mm512_fmadd_ps: rounded once, so the same bits
// everywhere), in the order ir/winograd.h specifies.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "runtime/cpu/internal.h"
#include "runtime/cpu/winograd_f4.h"
#include "runtime/cpu/xlac_runtime.h"

namespace xlac::rt {
namespace winograd {
namespace {

// The 1-D transform of `n` values at `in[0], in[step], ...` by the coefficients `coef` (one row, n of them): +0, then
// fma(coef, value, acc) for every nonzero coefficient in order.
inline float Combine(const float* coef, const float* in, int64_t step, int n) {
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) {
    if (coef[k] != 0.0f) acc = std::fma(coef[k], in[k * step], acc);
  }
  return acc;
}

}  // namespace

void InputTilePortable(const WinogradInputArgs& p, const float* plane, int64_t ty, int64_t tx, float* out) {
  const int n = static_cast<int>(p.m + 2);
  float d[kMaxN][kMaxN], t[kMaxN][kMaxN];
  for (int k = 0; k < n; ++k) {
    const int64_t row = p.m * ty - p.pad_low[0] + k;
    for (int l = 0; l < n; ++l) {
      const int64_t col = p.m * tx - p.pad_low[1] + l;
      const bool inside = row >= 0 && row < p.height && col >= 0 && col < p.width;
      d[k][l] = inside ? plane[row * p.x_strides[2] + col * p.x_strides[3]] : 0.0f;
    }
  }
  for (int k = 0; k < n; ++k) {
    for (int b = 0; b < n; ++b) t[k][b] = Combine(p.bt + b * n, &d[k][0], 1, n);
  }
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) out[a * n + b] = Combine(p.bt + a * n, &t[0][b], kMaxN, n);
  }
}

void OutputTilePortable(const WinogradOutputArgs& p, const float* mm, int64_t point_stride, float* plane, int64_t ty,
                        int64_t tx) {
  const int n = static_cast<int>(p.m + 2), m = static_cast<int>(p.m);
  float in[kMaxN][kMaxN], s[kMaxN][kMaxN];
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) in[a][b] = mm[(a * n + b) * point_stride];
  }
  for (int r = 0; r < m; ++r) {
    for (int b = 0; b < n; ++b) s[r][b] = Combine(p.at + r * n, &in[0][b], kMaxN, n);
  }
  for (int r = 0; r < m; ++r) {
    const int64_t row = m * ty + r;
    if (row >= p.height) break;
    for (int q = 0; q < m; ++q) {
      const int64_t col = m * tx + q;
      if (col >= p.width) break;
      plane[row * p.y_strides[2] + col * p.y_strides[3]] = Combine(p.at + q * n, &s[r][0], 1, n);
    }
  }
}

#ifdef XLAC_WINOGRAD_AVX512

bool HasAvx512() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return has;
}

__attribute__((target("avx512f"), noinline)) void StoreStrided(__m512 v, float* dst, int64_t count, int64_t stride) {
  alignas(64) float buffer[16];
  _mm512_store_ps(buffer, v);
  for (int64_t j = 0; j < count; ++j) dst[j * stride] = buffer[j];
}

#endif  // XLAC_WINOGRAD_AVX512

}  // namespace winograd

namespace {

using namespace winograd;  // NOLINT: the shared pieces of winograd_f4.h

// Below this many transformed elements the transform runs on the calling thread (waking the pool costs more).
constexpr int64_t kMinParallelElements = int64_t{1} << 15;

#ifdef XLAC_WINOGRAD_AVX512

// The same 1-D transform as Combine on vectors of 16 tiles. (Unrolled over N with the zero test per step, which
// becomes a masked FMA: faster here than loops over a precomputed list of the nonzero coefficients, 3.1 vs 5.7 ms
// per ResNet-block input transform.)
template <int N>
__attribute__((target("avx512f"))) inline __m512 CombineVec(const float* coef, const __m512* in, int step) {
  __m512 acc = _mm512_setzero_ps();
  for (int k = 0; k < N; ++k) {
    if (coef[k] != 0.0f) acc = _mm512_fmadd_ps(_mm512_set1_ps(coef[k]), in[k * step], acc);
  }
  return acc;
}

// dst[0, count) = src[0, count) in whole vectors: the last one ends at count (overlapping the one before), so
// nothing past the end is written.
__attribute__((target("avx512f"))) inline void CopyRow(const float* src, float* dst, int64_t count) {
  if (count < 16) {
    const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1);
    _mm512_mask_storeu_ps(dst, mask, _mm512_maskz_loadu_ps(mask, src));
    return;
  }
  for (int64_t i = 0; i + 16 < count; i += 16) _mm512_storeu_ps(dst + i, _mm512_loadu_ps(src + i));
  _mm512_storeu_ps(dst + count - 16, _mm512_loadu_ps(src + count - 16));
}

// Moving between "one tile per lane" and image columns for 16 consecutive tiles of a tile row, whose m * 16 columns
// are m vectors: lane j of the tiles' vector is column m * j; column 16 * o + j of the image vectors is lane
// (16 * o + j) / m of the tiles' vector for its q = (16 * o + j) % m. One masked single-source permute per (vector,
// q) pair, no gathers or scatters (which cost tens of cycles each here).
template <int M>
struct LaneMaps {
  __m512i pick_index;           // tiles' lane j <- lane (M * j) % 16 of image vector (M * j) / 16
  __mmask16 pick_mask[M];       // per image vector o: the tiles' lanes it provides
  __m512i spread_index[M];      // per image vector o, lane j: the tile (16 * o + j) / M
  __mmask16 spread_mask[M][M];  // [o][q]: the lanes of image vector o that are column q of their tile
  __attribute__((target("avx512f"))) LaneMaps() {
    alignas(64) int32_t pick[16];
    for (int o = 0; o < M; ++o) pick_mask[o] = 0;
    for (int j = 0; j < 16; ++j) {
      pick[j] = (M * j) % 16;
      pick_mask[(M * j) / 16] |= static_cast<__mmask16>(1u << j);
    }
    pick_index = _mm512_load_si512(pick);
    for (int o = 0; o < M; ++o) {
      alignas(64) int32_t spread[16];
      for (int q = 0; q < M; ++q) spread_mask[o][q] = 0;
      for (int j = 0; j < 16; ++j) {
        spread[j] = (16 * o + j) / M;
        spread_mask[o][(16 * o + j) % M] |= static_cast<__mmask16>(1u << j);
      }
      spread_index[o] = _mm512_load_si512(spread);
    }
  }
};

// One channel of every image (a work unit): row by row, the padded image row in `row` (zero outside the image),
// the 1-D transform along columns at every tile's n columns (h[b] for 16 tiles at once: the transform at all m * 16
// columns, then every m-th picked out), kept for the tile rows that read it; then for every tile row the transform
// along rows into the image's staging rows (one per transform point), which are then copied to V one by one.
template <int N>
__attribute__((target("avx512f"))) void InputChannelAvx512(const WinogradInputArgs& p, int64_t channel) {
  constexpr int m = N - 2;
  static const LaneMaps<m> maps;
  const int64_t chunks = (p.tiles[1] + 15) / 16, rows = m * p.tiles[0] + 2;
  const int64_t row_length = chunks * 16 * m + 32;  // every load below stays inside
  const int64_t tiles = p.tiles[0] * p.tiles[1], unit_length = p.batch * tiles;
  const int64_t point_stride = p.channels * unit_length;
  // Staging rows of one image's tiles per transform point, flushed to V one after the other: V's n^2 rows for one
  // channel lie C * N * T0 * T1 floats apart, often a multiple of 4 KiB, so 36 interleaved store streams all map to
  // the same L1 sets and evicted each other's lines (the stores took most of the transform's time).
  const int64_t staging_length = (tiles + 15) / 16 * 16 + 16;
  // The row (and 16 floats of slack for the zeroing stores), h [rows][N][chunks], then the staging rows, all 64-byte
  // aligned.
  auto* row = static_cast<float*>(
      xlac_rt_thread_scratch((row_length + 16 + rows * N * chunks * 16 + N * N * staging_length) * 4));
  __m512* h = reinterpret_cast<__m512*>(row + row_length + 16);
  float* staging = row + row_length + 16 + rows * N * chunks * 16;
  float* out = p.v + channel * unit_length;
  for (int64_t image = 0; image < p.batch; ++image) {
    const float* plane = p.x + image * p.x_strides[0] + channel * p.x_strides[1];
    for (int64_t r = 0; r < rows; ++r) {
      __m512* hr = h + r * N * chunks;
      const int64_t y = r - p.pad_low[0];
      if (y < 0 || y >= p.height) {
        for (int64_t i = 0; i < N * chunks; ++i) hr[i] = _mm512_setzero_ps();
        continue;
      }
      const float* src = plane + y * p.x_strides[2];
      // Zeros around the copied columns (only the margins: a memset of the whole row per row cost a quarter of the
      // transform's time).
      const int64_t width = std::max<int64_t>(std::min<int64_t>(p.width, row_length - p.pad_low[1]), 0);
      for (int64_t w = 0; w < p.pad_low[1] && w < row_length; ++w) row[w] = 0.0f;
      for (int64_t w = p.pad_low[1] + width; w < row_length; w += 16) _mm512_storeu_ps(row + w, _mm512_setzero_ps());
      float* dst = row + p.pad_low[1];
      if (p.x_strides[3] == 1) {
        std::memcpy(dst, src, static_cast<size_t>(width) * 4);
      } else {
        for (int64_t w = 0; w < width; ++w) dst[w] = src[w * p.x_strides[3]];
      }
      for (int64_t c = 0; c < chunks; ++c) {
        const float* base = row + c * 16 * m;
        for (int b = 0; b < N; ++b) {
          __m512 picked = _mm512_setzero_ps();
          for (int o = 0; o < m; ++o) {
            __m512 acc = _mm512_setzero_ps();
            for (int l = 0; l < N; ++l) {
              const float coef = p.bt[b * N + l];
              if (coef != 0.0f) acc = _mm512_fmadd_ps(_mm512_set1_ps(coef), _mm512_loadu_ps(base + 16 * o + l), acc);
            }
            picked = _mm512_mask_permutexvar_ps(picked, maps.pick_mask[o], maps.pick_index, acc);
          }
          hr[b * chunks + c] = picked;
        }
      }
    }
    // A store of fewer than 16 tiles writes garbage into the following tiles' places (written later) or the slack.
    for (int64_t ty = 0; ty < p.tiles[0]; ++ty) {
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t column = ty * p.tiles[1] + c * 16;
        __m512 rows_k[N];
        for (int b = 0; b < N; ++b) {
          for (int k = 0; k < N; ++k) rows_k[k] = h[((m * ty + k) * N + b) * chunks + c];
          for (int a = 0; a < N; ++a) {
            _mm512_storeu_ps(staging + (a * N + b) * staging_length + column, CombineVec<N>(p.bt + a * N, rows_k, 1));
          }
        }
      }
    }
    for (int q = 0; q < N * N; ++q)
      CopyRow(staging + q * staging_length, out + q * point_stride + image * tiles, tiles);
  }
}

// One feature of every image (a work unit): for 16 tiles of a tile row at once, M's n^2 values (contiguous loads),
// the transform along rows, then for each of the tile's m output rows the transform along columns, spread into
// image columns and stored (masked at the output's right edge; through a buffer when the columns are strided).
template <int N>
__attribute__((target("avx512f"))) void OutputFeatureAvx512(const WinogradOutputArgs& p, int64_t feature) {
  constexpr int m = N - 2;
  static const LaneMaps<m> maps;
  const int64_t chunks = (p.tiles[1] + 15) / 16;
  const int64_t tiles = p.tiles[0] * p.tiles[1], unit_length = p.batch * tiles;
  const int64_t point_stride = p.features * unit_length;
  const float* in = p.mm + feature * unit_length;
  // One image's tiles of M's n^2 rows, copied one row after the other (as the input transform's stores: interleaved
  // loads from rows a multiple of 4 KiB apart fight over the same L1 sets); 16 floats of zero slack after each.
  const int64_t staging_length = (tiles + 15) / 16 * 16 + 16;
  auto* staging = static_cast<float*>(xlac_rt_thread_scratch(N * N * staging_length * 4));
  for (int q = 0; q < N * N; ++q) {
    for (int64_t i = tiles; i < staging_length; ++i) staging[q * staging_length + i] = 0.0f;
  }
  for (int64_t image = 0; image < p.batch; ++image) {
    float* plane = p.y + image * p.y_strides[0] + feature * p.y_strides[1];
    for (int q = 0; q < N * N; ++q) CopyRow(in + q * point_stride + image * tiles, staging + q * staging_length, tiles);
    for (int64_t ty = 0; ty < p.tiles[0]; ++ty) {
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t column = ty * p.tiles[1] + c * 16;
        const int64_t lanes = std::min<int64_t>(16, p.tiles[1] - c * 16);
        __m512 values[N * N], s[m * N], out[m];
        for (int q = 0; q < N * N; ++q) values[q] = _mm512_loadu_ps(staging + q * staging_length + column);
        for (int r = 0; r < m; ++r) {
          for (int b = 0; b < N; ++b) s[r * N + b] = CombineVec<N>(p.at + r * N, values + b, N);
        }
        const int64_t first_col = c * 16 * m;
        const int64_t cols = std::min<int64_t>(p.width - first_col, lanes * m);
        for (int r = 0; r < m; ++r) {
          const int64_t y = m * ty + r;
          if (y >= p.height) break;
          for (int q = 0; q < m; ++q) out[q] = CombineVec<N>(p.at + q * N, s + r * N, 1);
          float* dst_row = plane + y * p.y_strides[2] + first_col * p.y_strides[3];
          for (int o = 0; o < m && 16 * o < cols; ++o) {
            __m512 spread = _mm512_setzero_ps();
            for (int q = 0; q < m; ++q) {
              spread = _mm512_mask_permutexvar_ps(spread, maps.spread_mask[o][q], maps.spread_index[o], out[q]);
            }
            const int64_t count = std::min<int64_t>(16, cols - 16 * o);
            if (p.y_strides[3] == 1) {
              if (count == 16) {
                _mm512_storeu_ps(dst_row + 16 * o, spread);
              } else {
                _mm512_mask_storeu_ps(dst_row + 16 * o, FirstLanes(count), spread);
              }
            } else {
              alignas(64) float buffer[16];
              _mm512_store_ps(buffer, spread);
              for (int64_t j = 0; j < count; ++j) dst_row[(16 * o + j) * p.y_strides[3]] = buffer[j];
            }
          }
        }
      }
    }
  }
}

// The input transform of one channel of every image for F(4x4). Per image row, for 16 tiles of a tile row at once,
// the six columns 4j + l (l = 0..5) each tile reads become six vectors (lane j = tile j) by two-source permutes of
// the row's first four vectors and a one-lane shift for l = 4, 5; the transform along columns then runs once per
// tile, not at all 64 columns (as the generic code does) with every 4th picked out. Rows of contiguous images are
// read in place by masked loads (zero outside the image); strided ones through a zero-padded copy. The transform
// along rows and the staging of V's rows are the generic kernel's.
__attribute__((target("avx512f"))) void InputChannelF4(const WinogradInputArgs& p, int64_t channel) {
  constexpr int N = 6;
  const int64_t chunks = (p.tiles[1] + 15) / 16, rows = 4 * p.tiles[0] + 2;
  const int64_t row_length = chunks * 64 + 32;  // the loads below reach 64 * chunks + 17
  const int64_t tiles = p.tiles[0] * p.tiles[1], unit_length = p.batch * tiles;
  const int64_t point_stride = p.channels * unit_length;
  const int64_t staging_length = (tiles + 15) / 16 * 16 + 16;  // see InputChannelAvx512
  auto* row =
      static_cast<float*>(xlac_rt_thread_scratch((row_length + rows * N * chunks * 16 + N * N * staging_length) * 4));
  __m512* h = reinterpret_cast<__m512*>(row + row_length);
  float* staging = row + row_length + rows * N * chunks * 16;
  float* out = p.v + channel * unit_length;
  const F4Lanes lanes;
  const bool contiguous = p.x_strides[3] == 1;
  // Positions of the padded row: position w is image column w - pad_low[1]; [lo, hi) hold the image's columns.
  const int64_t lo = contiguous ? p.pad_low[1] : 0, hi = contiguous ? p.pad_low[1] + p.width : row_length;
  if (!contiguous) {
    for (int64_t w = 0; w < row_length; ++w) row[w] = 0.0f;
  }
  for (int64_t image = 0; image < p.batch; ++image) {
    const float* plane = p.x + image * p.x_strides[0] + channel * p.x_strides[1];
    // The plane read after this one (the next image's, or the next channel's first), prefetched a row at a time one
    // plane ahead: the loads of x stalled on memory for about half of this kernel's time without it.
    const float* next = image + 1 < p.batch        ? plane + p.x_strides[0]
                        : channel + 1 < p.channels ? p.x + (channel + 1) * p.x_strides[1]
                                                   : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      __m512* hr = h + r * N * chunks;
      const int64_t y = r - p.pad_low[0];
      if (y < 0 || y >= p.height) {
        for (int64_t i = 0; i < N * chunks; ++i) hr[i] = _mm512_setzero_ps();
        continue;
      }
      const float* src = plane + y * p.x_strides[2];
      if (next != nullptr && contiguous) Prefetch(next + y * p.x_strides[2], p.width * 4);
      // Address of position w (only dereferenced by masked loads at positions in [lo, hi)).
      uintptr_t base = reinterpret_cast<uintptr_t>(src) - static_cast<uintptr_t>(p.pad_low[1]) * 4;
      if (!contiguous) {
        for (int64_t w = 0; w < p.width && p.pad_low[1] + w < row_length; ++w) {
          row[p.pad_low[1] + w] = src[w * p.x_strides[3]];
        }
        base = reinterpret_cast<uintptr_t>(row);
      }
      InputRowF4(lanes, base, lo, hi, chunks, hr);
    }
    if (!contiguous) {
      for (int64_t w = 0; w < row_length; ++w) row[w] = 0.0f;  // the next image's copies rely on the zeros
    }
    for (int64_t ty = 0; ty < p.tiles[0]; ++ty) {
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t column = ty * p.tiles[1] + c * 16;
        for (int b = 0; b < N; ++b) {
          __m512 rows_k[N], t[N];
          for (int k = 0; k < N; ++k) rows_k[k] = h[((4 * ty + k) * N + b) * chunks + c];
          ApplyConst<kBt4, N>(rows_k, 1, t, 1);
          for (int a = 0; a < N; ++a) _mm512_storeu_ps(staging + (a * N + b) * staging_length + column, t[a]);
        }
      }
    }
    for (int q = 0; q < N * N; ++q)
      CopyRow(staging + q * staging_length, out + q * point_stride + image * tiles, tiles);
  }
}

// The output transform of one feature of every image for F(4x4): the generic kernel's order, with the coefficients
// constant and each output row's four vectors of 16 tiles (one per column q of the tiles) interleaved into image
// columns by two two-source permutes and a blend per image vector.
// Contiguous: y's columns are adjacent (instantiated apart: the strided stores' calls made the compiler keep the
// unrolled loop's vectors on the stack).
template <bool Contiguous>
__attribute__((target("avx512f"))) void OutputFeatureF4(const WinogradOutputArgs& p, int64_t feature) {
  constexpr int N = 6, m = 4;
  const int64_t chunks = (p.tiles[1] + 15) / 16;
  const int64_t tiles = p.tiles[0] * p.tiles[1], unit_length = p.batch * tiles;
  const int64_t point_stride = p.features * unit_length;
  const float* in = p.mm + feature * unit_length;
  const int64_t staging_length = (tiles + 15) / 16 * 16 + 16;  // see OutputFeatureAvx512
  auto* staging = static_cast<float*>(xlac_rt_thread_scratch(N * N * staging_length * 4));
  for (int q = 0; q < N * N; ++q) {
    for (int64_t i = tiles; i < staging_length; ++i) staging[q * staging_length + i] = 0.0f;
  }
  const F4Lanes lanes;
  for (int64_t image = 0; image < p.batch; ++image) {
    float* plane = p.y + image * p.y_strides[0] + feature * p.y_strides[1];
    for (int q = 0; q < N * N; ++q) CopyRow(in + q * point_stride + image * tiles, staging + q * staging_length, tiles);
    for (int64_t ty = 0; ty < p.tiles[0]; ++ty) {
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t column = ty * p.tiles[1] + c * 16;
        const int64_t lanes_in_chunk = std::min<int64_t>(16, p.tiles[1] - c * 16);
        const float* src = staging + column;
        const int64_t first_col = c * 16 * m;
        const int64_t cols = std::min<int64_t>(p.width - first_col, lanes_in_chunk * m);
        const int64_t out_rows = std::min<int64_t>(m, p.height - m * ty);
        OutputTileRowF4<Contiguous>(lanes, src, staging_length,
                                    plane + m * ty * p.y_strides[2] + first_col * p.y_strides[3], p.y_strides[2],
                                    p.y_strides[3], cols, out_rows);
      }
    }
  }
}

#endif  // XLAC_WINOGRAD_AVX512

struct InputJob {
  const WinogradInputArgs* args;
  bool vectors;
  bool f4;  // vectors, m = 4 and bt the standard B^T: InputChannelF4
};

// Work units: channels.
void InputRange(int64_t begin, int64_t end, void* ctx) {
  const InputJob& job = *static_cast<const InputJob*>(ctx);
  const WinogradInputArgs& p = *job.args;
  const int n = static_cast<int>(p.m + 2);
  for (int64_t channel = begin; channel < end; ++channel) {
#ifdef XLAC_WINOGRAD_AVX512
    if (job.f4) {
      InputChannelF4(p, channel);
      continue;
    }
    if (job.vectors) {
      switch (n) {
        case 4:
          InputChannelAvx512<4>(p, channel);
          continue;
        case 6:
          InputChannelAvx512<6>(p, channel);
          continue;
        case 8:
          InputChannelAvx512<8>(p, channel);
          continue;
        default:
          break;
      }
    }
#endif
    const int64_t tiles = p.tiles[0] * p.tiles[1], unit_length = p.batch * tiles;
    const int64_t point_stride = p.channels * unit_length;
    for (int64_t image = 0; image < p.batch; ++image) {
      const float* plane = p.x + image * p.x_strides[0] + channel * p.x_strides[1];
      float* out = p.v + channel * unit_length + image * tiles;
      float tile[kMaxN * kMaxN];
      for (int64_t t = 0; t < tiles; ++t) {
        InputTilePortable(p, plane, t / p.tiles[1], t % p.tiles[1], tile);
        for (int q = 0; q < n * n; ++q) out[q * point_stride + t] = tile[q];
      }
    }
  }
}

struct OutputJob {
  const WinogradOutputArgs* args;
  bool vectors;
  bool f4;  // vectors, m = 4 and at the standard A^T: OutputFeatureF4
};

// Work units: features.
void OutputRange(int64_t begin, int64_t end, void* ctx) {
  const OutputJob& job = *static_cast<const OutputJob*>(ctx);
  const WinogradOutputArgs& p = *job.args;
  for (int64_t feature = begin; feature < end; ++feature) {
#ifdef XLAC_WINOGRAD_AVX512
    if (job.f4) {
      if (p.y_strides[3] == 1) {
        OutputFeatureF4<true>(p, feature);
      } else {
        OutputFeatureF4<false>(p, feature);
      }
      continue;
    }
    if (job.vectors) {
      switch (p.m + 2) {
        case 4:
          OutputFeatureAvx512<4>(p, feature);
          continue;
        case 6:
          OutputFeatureAvx512<6>(p, feature);
          continue;
        case 8:
          OutputFeatureAvx512<8>(p, feature);
          continue;
        default:
          break;
      }
    }
#endif
    const int64_t tiles = p.tiles[0] * p.tiles[1], unit_length = p.batch * tiles;
    const int64_t point_stride = p.features * unit_length;
    for (int64_t image = 0; image < p.batch; ++image) {
      float* plane = p.y + image * p.y_strides[0] + feature * p.y_strides[1];
      const float* in = p.mm + feature * unit_length + image * tiles;
      for (int64_t t = 0; t < tiles; ++t) {
        OutputTilePortable(p, in + t, point_stride, plane, t / p.tiles[1], t % p.tiles[1]);
      }
    }
  }
}

bool UseVectors(bool portable) {
#ifdef XLAC_WINOGRAD_AVX512
  return !portable && HasAvx512();
#else
  (void)portable;
  return false;
#endif
}

}  // namespace

void WinogradInput(XlacRtDevice* dev, const WinogradInputArgs& args, bool portable) {
  const int64_t n = args.m + 2;
  if (args.m != 2 && args.m != 4 && args.m != 6) return;
  const int64_t elements = n * n * args.channels * args.batch * args.tiles[0] * args.tiles[1];
  if (elements == 0) return;
  InputJob job{&args, UseVectors(portable), false};
#ifdef XLAC_WINOGRAD_AVX512
  job.f4 = job.vectors && args.m == 4 && IsF4(args.bt, &kBt4[0][0], 6);
#endif
  xlac_rt_device_parallel_for(elements < kMinParallelElements ? nullptr : dev, args.channels, InputRange, &job);
}

void WinogradOutput(XlacRtDevice* dev, const WinogradOutputArgs& args, bool portable) {
  if (args.m != 2 && args.m != 4 && args.m != 6) return;
  const int64_t elements = args.batch * args.features * args.height * args.width;
  if (elements == 0) return;
  OutputJob job{&args, UseVectors(portable), false};
#ifdef XLAC_WINOGRAD_AVX512
  job.f4 = job.vectors && args.m == 4 && IsF4(args.at, &kAt4[0][0], 4);
#endif
  xlac_rt_device_parallel_for(elements < kMinParallelElements ? nullptr : dev, args.features, OutputRange, &job);
}

}  // namespace xlac::rt

extern "C" {

void xlac_rt_winograd_input_f32(XlacRtDevice* dev, const float* x, float* v, int64_t m, const float* bt,
                                const int64_t* sizes, const int64_t* x_strides) {
  xlac::rt::WinogradInputArgs args;
  args.x = x;
  args.v = v;
  args.m = m;
  args.bt = bt;
  args.batch = sizes[0];
  args.channels = sizes[1];
  args.height = sizes[2];
  args.width = sizes[3];
  args.tiles[0] = sizes[4];
  args.tiles[1] = sizes[5];
  args.pad_low[0] = sizes[6];
  args.pad_low[1] = sizes[7];
  std::memcpy(args.x_strides, x_strides, sizeof(args.x_strides));
  xlac::rt::WinogradInput(dev, args, false);
}

void xlac_rt_winograd_output_f32(XlacRtDevice* dev, const float* mm, float* y, int64_t m, const float* at,
                                 const int64_t* sizes, const int64_t* y_strides) {
  xlac::rt::WinogradOutputArgs args;
  args.mm = mm;
  args.y = y;
  args.m = m;
  args.at = at;
  args.batch = sizes[0];
  args.features = sizes[1];
  args.height = sizes[2];
  args.width = sizes[3];
  args.tiles[0] = sizes[4];
  args.tiles[1] = sizes[5];
  std::memcpy(args.y_strides, y_strides, sizeof(args.y_strides));
  xlac::rt::WinogradOutput(dev, args, false);
}

}  // extern "C"
