// The fused Winograd F(m x m, 3 x 3) convolution ("xlac.winograd_conv", ir/winograd.h): input transform, the products
// with the transformed filter and the output transform of two tile rows of one image at a time, so that the
// transformed tiles (V and M, each 36 times the size of the image's tile row per channel) stay in the core's cache
// instead of going through memory as two arrays 2.25x the size of x and y (the separate transforms of winograd.cc
// took as long as the products and scaled 1.4-1.6x on two cores).
//
// Work units: two tile rows of one image (one when a tile row takes more than one vector). With AVX-512 and F(4x4)
// (what the pass emits) a unit
//  1. transforms every channel's input rows along columns (InputRowF4: 16 tiles per vector; the two rows the tile
//     rows share, once) and then along rows into V [36][C][vectors];
//  2. per pair of vectors, block of up to 8 output features and transform point p: M[p][k] = sum over c of
//     u[p][c][k] * V[p][c] in 8 x 2 accumulators (a broadcast of u feeds two vectors; channels in order);
//  3. transforms each feature's 36 vectors of M back into its four output rows (OutputTileRowF4).
// One core, one ResNet-block convolution (f32[8, 64, 56, 56], 64 features): input transform ~0.8 ms, products ~2.9,
// output transform ~0.4 (the separate transforms around a batched dot: ~6 ms).
// Elsewhere (other m, no AVX-512) the portable code does the same arithmetic one tile at a time, bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "runtime/cpu/internal.h"
#include "runtime/cpu/winograd_f4.h"
#include "runtime/cpu/xlac_runtime.h"

namespace xlac::rt {
namespace {

using namespace winograd;  // NOLINT: the shared pieces of winograd_f4.h

// Below this many multiply-adds the convolution runs on the calling thread (waking the pool costs more).
constexpr int64_t kMinParallelFmas = int64_t{1} << 20;

WinogradInputArgs InputArgs(const WinogradConvArgs& p) {
  WinogradInputArgs in;
  in.x = p.x;
  in.m = p.m;
  in.bt = p.bt;
  in.batch = p.batch;
  in.channels = p.channels;
  in.height = p.height;
  in.width = p.width;
  in.tiles[0] = p.tiles[0];
  in.tiles[1] = p.tiles[1];
  in.pad_low[0] = p.pad_low[0];
  in.pad_low[1] = p.pad_low[1];
  std::copy(p.x_strides, p.x_strides + 4, in.x_strides);
  return in;
}

WinogradOutputArgs OutputArgs(const WinogradConvArgs& p) {
  WinogradOutputArgs out;
  out.y = p.y;
  out.m = p.m;
  out.at = p.at;
  out.batch = p.batch;
  out.features = p.features;
  out.height = p.out_height;
  out.width = p.out_width;
  out.tiles[0] = p.tiles[0];
  out.tiles[1] = p.tiles[1];
  std::copy(p.y_strides, p.y_strides + 4, out.y_strides);
  return out;
}

// One tile row of one image, one tile at a time.
void UnitPortable(const WinogradConvArgs& p, int64_t image, int64_t ty) {
  const WinogradInputArgs in = InputArgs(p);
  const WinogradOutputArgs out = OutputArgs(p);
  const int64_t n = p.m + 2, points = n * n, t1 = p.tiles[1], channels = p.channels, features = p.features;
  // V [points][C][T1], then one tile's M [points].
  auto* v = static_cast<float*>(xlac_rt_thread_scratch((points * channels * t1 + points) * 4));
  float* mt = v + points * channels * t1;
  float tile[kMaxN * kMaxN];
  for (int64_t c = 0; c < channels; ++c) {
    const float* plane = p.x + image * p.x_strides[0] + c * p.x_strides[1];
    for (int64_t tx = 0; tx < t1; ++tx) {
      InputTilePortable(in, plane, ty, tx, tile);
      for (int64_t q = 0; q < points; ++q) v[(q * channels + c) * t1 + tx] = tile[q];
    }
  }
  for (int64_t k = 0; k < features; ++k) {
    float* plane = p.y + image * p.y_strides[0] + k * p.y_strides[1];
    for (int64_t tx = 0; tx < t1; ++tx) {
      for (int64_t q = 0; q < points; ++q) {
        const float* u = p.u + q * channels * features + k;
        const float* vq = v + q * channels * t1 + tx;
        float acc = 0.0f;
        for (int64_t c = 0; c < channels; ++c) acc = std::fma(u[c * features], vq[c * t1], acc);
        mt[q] = acc;
      }
      OutputTilePortable(out, mt, 1, plane, ty, tx);
    }
  }
}

#ifdef XLAC_WINOGRAD_AVX512

// out[j * W + s] = sum over c of u[c * u_stride + j] * v[c * v_stride + s] for j < KB, s < W: from +0, one fused
// multiply-add per channel in order (the accumulators stay in registers; each broadcast of u feeds W vectors).
template <int KB, int W>
__attribute__((target("avx512f"))) void Product(const __m512* v, int64_t v_stride, const float* u, int64_t u_stride,
                                                int64_t channels, __m512* out) {
  __m512 acc[KB][W];
#pragma clang loop unroll(full)
  for (int j = 0; j < KB; ++j) {
#pragma clang loop unroll(full)
    for (int s = 0; s < W; ++s) acc[j][s] = _mm512_setzero_ps();
  }
  for (int64_t c = 0; c < channels; ++c) {
    __m512 vc[W];
#pragma clang loop unroll(full)
    for (int s = 0; s < W; ++s) vc[s] = v[c * v_stride + s];
    const float* uc = u + c * u_stride;
#pragma clang loop unroll(full)
    for (int j = 0; j < KB; ++j) {
      const __m512 uj = _mm512_set1_ps(uc[j]);
#pragma clang loop unroll(full)
      for (int s = 0; s < W; ++s) acc[j][s] = _mm512_fmadd_ps(uj, vc[s], acc[j][s]);
    }
  }
#pragma clang loop unroll(full)
  for (int j = 0; j < KB; ++j) {
#pragma clang loop unroll(full)
    for (int s = 0; s < W; ++s) out[j * W + s] = acc[j][s];
  }
}

// The feature block that starts at k0 of `features`: 16 (8 for two vectors), then powers of two. M's 36 x 16
// vectors then fit in L1 for the output transform (with 12 x 2 they did not, and it slowed down more than the
// products gained).
int FeatureBlock(int64_t left, int width) {
  const int64_t first = width == 2 ? 8 : 16;
  return static_cast<int>(left >= first ? first : left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1);
}

template <int W>
__attribute__((target("avx512f"))) void ProductBlock(int block, const __m512* v, int64_t v_stride, const float* u,
                                                     int64_t u_stride, int64_t channels, __m512* out) {
  switch (block) {
    case 16:
      if constexpr (W == 1) Product<16, 1>(v, v_stride, u, u_stride, channels, out);
      break;
    case 8:
      Product<8, W>(v, v_stride, u, u_stride, channels, out);
      break;
    case 4:
      Product<4, W>(v, v_stride, u, u_stride, channels, out);
      break;
    case 2:
      Product<2, W>(v, v_stride, u, u_stride, channels, out);
      break;
    default:
      Product<1, W>(v, v_stride, u, u_stride, channels, out);
      break;
  }
}

constexpr int64_t kPrefetchChannels = 1;
// Vectors of M per transform point: a block of 16 features of one vector of tiles or 8 of two.
constexpr int kMaxBlock = 16;

// Tile rows ty0 .. ty0 + rows - 1 (rows <= 2) of one image. Their 4 * rows + 2 input rows are transformed along
// columns once per channel (the rows two tile rows share, once); their V vectors (rows x chunks of 16 tiles) go to
// the products in pairs, so that each broadcast of U feeds two vectors.
template <bool Contiguous>
__attribute__((target("avx512f"))) void UnitF4(const WinogradConvArgs& p, const F4Lanes& lanes, int64_t image,
                                               int64_t ty0, int64_t rows) {
  constexpr int N = 6, points = N * N;
  const int64_t chunks = (p.tiles[1] + 15) / 16, channels = p.channels, features = p.features;
  const int64_t nv = rows * chunks, in_rows = 4 * rows + 2;
  const int64_t row_length = chunks * 64 + 32;  // InputRowF4's loads reach 64 * chunks + 17
  // Scratch: h [in_rows][6][chunks], V [36][C][nv] (+ padding), M [36][16] (vectors), the zero-padded row (strided
  // x).
  // V per transform point, one vector of padding apart: the input transform writes a channel's 36 points at once,
  // and at a power-of-two distance (C * nv vectors) they all mapped to one set of L1 and evicted each other (whole
  // ResNet convolution 5.9 -> 4.7 ms; a channel's 36 points side by side, [C][36][nv], 5.0).
  const int64_t point_stride = channels * nv + 1;
  const int64_t h_vectors = in_rows * N * chunks, v_vectors = points * point_stride;
  const int64_t m_vectors = points * kMaxBlock;
  auto* h = static_cast<__m512*>(xlac_rt_thread_scratch((h_vectors + v_vectors + m_vectors) * 64 + row_length * 4));
  __m512* v = h + h_vectors;
  __m512* mm = v + v_vectors;
  auto* row = reinterpret_cast<float*>(mm + m_vectors);
  const bool contiguous = p.x_strides[3] == 1;
  // Positions of the padded row: position w is image column w - pad_low[1]; [lo, hi) hold the image's columns.
  const int64_t lo = contiguous ? p.pad_low[1] : 0, hi = contiguous ? p.pad_low[1] + p.width : row_length;
  if (!contiguous) {
    for (int64_t w = 0; w < row_length; ++w) row[w] = 0.0f;
  }

  // 1. V: per channel, the transform of its input rows along columns, then along rows per tile row.
  for (int64_t c = 0; c < channels; ++c) {
    const float* plane = p.x + image * p.x_strides[0] + c * p.x_strides[1];
    for (int64_t r = 0; r < in_rows; ++r) {
      __m512* hr = h + r * N * chunks;
      const int64_t y = 4 * ty0 - p.pad_low[0] + r;
      if (y < 0 || y >= p.height) {
        for (int64_t i = 0; i < N * chunks; ++i) hr[i] = _mm512_setzero_ps();
        continue;
      }
      const float* src = plane + y * p.x_strides[2];
      // The same row of the next channel, towards L1: a unit reads a few short rows per channel, planes apart,
      // which the hardware prefetchers do not follow.
      if (contiguous && c + kPrefetchChannels < channels) {
        Prefetch(src + kPrefetchChannels * p.x_strides[1], p.width * 4);
      }
      uintptr_t base = reinterpret_cast<uintptr_t>(src) - static_cast<uintptr_t>(p.pad_low[1]) * 4;
      if (!contiguous) {
        for (int64_t w = 0; w < p.width && p.pad_low[1] + w < row_length; ++w) {
          row[p.pad_low[1] + w] = src[w * p.x_strides[3]];
        }
        base = reinterpret_cast<uintptr_t>(row);
      }
      InputRowF4(lanes, base, lo, hi, chunks, hr);
    }
    for (int64_t g = 0; g < rows; ++g) {
      for (int64_t chunk = 0; chunk < chunks; ++chunk) {
        for (int b = 0; b < N; ++b) {
          __m512 rows_k[N], t[N];
          for (int k = 0; k < N; ++k) rows_k[k] = h[((4 * g + k) * N + b) * chunks + chunk];
          ApplyConst<kBt4, N>(rows_k, 1, t, 1);
          for (int a = 0; a < N; ++a) v[(a * N + b) * point_stride + c * nv + g * chunks + chunk] = t[a];
        }
      }
    }
  }

  // 2 and 3, per pair of vectors and block of features.
  for (int64_t vp = 0; vp < nv; vp += 2) {
    const int width = nv - vp >= 2 ? 2 : 1;
    for (int64_t k0 = 0; k0 < features;) {
      const int block = FeatureBlock(features - k0, width);
      for (int q = 0; q < points; ++q) {
        const __m512* vq = v + q * point_stride + vp;
        const float* uq = p.u + q * channels * features + k0;
        __m512* out = mm + q * kMaxBlock;
        if (width == 2) {
          ProductBlock<2>(block, vq, nv, uq, features, channels, out);
        } else {
          ProductBlock<1>(block, vq, nv, uq, features, channels, out);
        }
      }
      for (int s = 0; s < width; ++s) {
        const int64_t ty = ty0 + (vp + s) / chunks, chunk = (vp + s) % chunks;
        const int64_t lanes_in_chunk = std::min<int64_t>(16, p.tiles[1] - chunk * 16);
        const int64_t first_col = chunk * 64;
        const int64_t cols = std::min<int64_t>(p.out_width - first_col, lanes_in_chunk * 4);
        const int64_t out_rows = std::min<int64_t>(4, p.out_height - 4 * ty);
        for (int j = 0; j < block; ++j) {
          float* dst = p.y + image * p.y_strides[0] + (k0 + j) * p.y_strides[1] + 4 * ty * p.y_strides[2] +
                       first_col * p.y_strides[3];
          OutputTileRowF4<Contiguous>(lanes, reinterpret_cast<const float*>(mm + j * width + s), kMaxBlock * 16, dst,
                                      p.y_strides[2], p.y_strides[3], cols, out_rows);
        }
      }
      k0 += block;
    }
  }
}

#endif  // XLAC_WINOGRAD_AVX512

struct ConvJob {
  const WinogradConvArgs* args;
  bool f4;        // AVX-512, m = 4 and bt / at the standard matrices: UnitF4
  int64_t group;  // tile rows per work unit
  int64_t units_per_image;
};

// Work units: `group` tile rows of one image.
void ConvRange(int64_t begin, int64_t end, void* ctx) {
  const ConvJob& job = *static_cast<const ConvJob*>(ctx);
  const WinogradConvArgs& p = *job.args;
#ifdef XLAC_WINOGRAD_AVX512
  if (job.f4) {
    const F4Lanes lanes;
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t image = unit / job.units_per_image, ty0 = unit % job.units_per_image * job.group;
      const int64_t rows = std::min<int64_t>(job.group, p.tiles[0] - ty0);
      if (p.y_strides[3] == 1) {
        UnitF4<true>(p, lanes, image, ty0, rows);
      } else {
        UnitF4<false>(p, lanes, image, ty0, rows);
      }
    }
    return;
  }
#endif
  for (int64_t unit = begin; unit < end; ++unit) UnitPortable(p, unit / p.tiles[0], unit % p.tiles[0]);
}

}  // namespace

void WinogradConv(XlacRtDevice* dev, const WinogradConvArgs& args, bool portable) {
  if (args.m != 2 && args.m != 4 && args.m != 6) return;
  if (args.batch == 0 || args.tiles[0] == 0 || args.features == 0 || args.tiles[1] == 0) return;
  ConvJob job{&args, false, 1, args.tiles[0]};
#ifdef XLAC_WINOGRAD_AVX512
  job.f4 = !portable && HasAvx512() && args.m == 4 && IsF4(args.bt, &kBt4[0][0], 6) && IsF4(args.at, &kAt4[0][0], 4);
  // Units of two tile rows when a tile row is one vector (pairs of vectors for the products), else of one.
  if (job.f4 && args.tiles[1] <= 16) {
    job.group = 2;
    job.units_per_image = (args.tiles[0] + 1) / 2;
  }
#else
  (void)portable;
#endif
  const int64_t n = args.m + 2;
  const int64_t fmas = n * n * args.channels * args.features * args.batch * args.tiles[0] * args.tiles[1];
  const int64_t work_units = args.batch * job.units_per_image;
  xlac_rt_device_parallel_for(fmas < kMinParallelFmas ? nullptr : dev, work_units, ConvRange, &job);
}

}  // namespace xlac::rt

extern "C" {

void xlac_rt_winograd_conv_f32(XlacRtDevice* dev, const float* x, const float* u, float* y, int64_t m, const float* bt,
                               const float* at, const int64_t* sizes, const int64_t* x_strides,
                               const int64_t* y_strides) {
  xlac::rt::WinogradConvArgs args;
  args.x = x;
  args.u = u;
  args.y = y;
  args.m = m;
  args.bt = bt;
  args.at = at;
  args.batch = sizes[0];
  args.channels = sizes[1];
  args.height = sizes[2];
  args.width = sizes[3];
  args.features = sizes[4];
  args.out_height = sizes[5];
  args.out_width = sizes[6];
  args.tiles[0] = sizes[7];
  args.tiles[1] = sizes[8];
  args.pad_low[0] = sizes[9];
  args.pad_low[1] = sizes[10];
  std::copy(x_strides, x_strides + 4, args.x_strides);
  std::copy(y_strides, y_strides + 4, args.y_strides);
  xlac::rt::WinogradConv(dev, args, false);
}

}  // extern "C"
