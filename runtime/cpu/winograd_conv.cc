// The fused Winograd F(m x m, 3 x 3) convolution ("xlac.winograd_conv", ir/winograd.h): input transform, the products
// with the transformed filter and the output transform of one tile row of one image at a time, so that the
// transformed tiles (V and M, each 36 times the size of the image's tile row per channel) stay in the core's cache
// instead of going through memory as two arrays 2.25x the size of x and y (the separate transforms of winograd.cc
// took as long as the products and scaled 1.4-1.6x on two cores).
//
// Work units: (image, tile row). With AVX-512 and F(4x4) (what the pass emits) a unit
//  1. transforms every channel's six input rows along columns (InputRowF4: 16 tiles per vector) and then along rows
//     into V [36][C][chunks] (vectors of 16 tiles);
//  2. per block of up to 16 output features and per transform point p: M[p][k] = sum over c of u[p][c][k] * V[p][c]
//     in 16 accumulators (a broadcast of u and a fused multiply-add per channel, channels in order);
//  3. transforms each feature's 36 vectors of M back into its four output rows (OutputTileRowF4).
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

// out[j] = sum over c of u[c * u_stride + j] * v[c * v_stride] for j < KB: from +0, one fused multiply-add per
// channel in order (the accumulators stay in registers; u's values are broadcast operands).
template <int KB>
__attribute__((target("avx512f"))) void Product(const __m512* v, int64_t v_stride, const float* u, int64_t u_stride,
                                                int64_t channels, __m512* out) {
  __m512 acc[KB];
#pragma clang loop unroll(full)
  for (int j = 0; j < KB; ++j) acc[j] = _mm512_setzero_ps();
  for (int64_t c = 0; c < channels; ++c) {
    const __m512 vc = v[c * v_stride];
    const float* uc = u + c * u_stride;
#pragma clang loop unroll(full)
    for (int j = 0; j < KB; ++j) acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(uc[j]), vc, acc[j]);
  }
#pragma clang loop unroll(full)
  for (int j = 0; j < KB; ++j) out[j] = acc[j];
}

constexpr int64_t kPrefetchChannels = 1;

// kMaxBlock features per block; the last block of K % 16 features goes by powers of two.
constexpr int kMaxBlock = 16;

template <bool Contiguous>
__attribute__((target("avx512f"))) void UnitF4(const WinogradConvArgs& p, const F4Lanes& lanes, int64_t image,
                                               int64_t ty) {
  constexpr int N = 6, points = N * N;
  const int64_t chunks = (p.tiles[1] + 15) / 16, channels = p.channels, features = p.features;
  const int64_t row_length = chunks * 64 + 32;  // InputRowF4's loads reach 64 * chunks + 17
  // Scratch: h [6 rows][6][chunks], V [36][C][chunks], M [36][16] (vectors), the zero-padded row (strided x).
  const int64_t h_vectors = N * N * chunks, v_vectors = points * channels * chunks, m_vectors = points * kMaxBlock;
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

  // 1. V: per channel, the transform of its six rows along columns, then along rows.
  for (int64_t c = 0; c < channels; ++c) {
    const float* plane = p.x + image * p.x_strides[0] + c * p.x_strides[1];
    for (int r = 0; r < N; ++r) {
      __m512* hr = h + r * N * chunks;
      const int64_t y = 4 * ty - p.pad_low[0] + r;
      if (y < 0 || y >= p.height) {
        for (int64_t i = 0; i < N * chunks; ++i) hr[i] = _mm512_setzero_ps();
        continue;
      }
      const float* src = plane + y * p.x_strides[2];
      // The same row of a channel two on, towards L1: a unit reads six short rows per channel, planes apart, which
      // the hardware prefetchers do not follow.
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
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      for (int b = 0; b < N; ++b) {
        __m512 rows_k[N], t[N];
        for (int k = 0; k < N; ++k) rows_k[k] = h[(k * N + b) * chunks + chunk];
        ApplyConst<kBt4, N>(rows_k, 1, t, 1);
        for (int a = 0; a < N; ++a) v[((a * N + b) * channels + c) * chunks + chunk] = t[a];
      }
    }
  }

  // 2 and 3, per chunk of 16 tiles and block of features.
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const int64_t lanes_in_chunk = std::min<int64_t>(16, p.tiles[1] - chunk * 16);
    const int64_t first_col = chunk * 64;
    const int64_t cols = std::min<int64_t>(p.out_width - first_col, lanes_in_chunk * 4);
    const int64_t out_rows = std::min<int64_t>(4, p.out_height - 4 * ty);
    for (int64_t k0 = 0; k0 < features;) {
      const int64_t left = features - k0;
      const int block = left >= 16 ? 16 : left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
      for (int q = 0; q < points; ++q) {
        const __m512* vq = v + q * channels * chunks + chunk;
        const float* uq = p.u + q * channels * features + k0;
        __m512* out = mm + q * kMaxBlock;
        switch (block) {
          case 16:
            Product<16>(vq, chunks, uq, features, channels, out);
            break;
          case 8:
            Product<8>(vq, chunks, uq, features, channels, out);
            break;
          case 4:
            Product<4>(vq, chunks, uq, features, channels, out);
            break;
          case 2:
            Product<2>(vq, chunks, uq, features, channels, out);
            break;
          default:
            Product<1>(vq, chunks, uq, features, channels, out);
            break;
        }
      }
      for (int j = 0; j < block; ++j) {
        float* dst = p.y + image * p.y_strides[0] + (k0 + j) * p.y_strides[1] + 4 * ty * p.y_strides[2] +
                     first_col * p.y_strides[3];
        OutputTileRowF4<Contiguous>(lanes, reinterpret_cast<const float*>(mm + j), kMaxBlock * 16, dst, p.y_strides[2],
                                    p.y_strides[3], cols, out_rows);
      }
      k0 += block;
    }
  }
}

#endif  // XLAC_WINOGRAD_AVX512

struct ConvJob {
  const WinogradConvArgs* args;
  bool f4;  // AVX-512, m = 4 and bt / at the standard matrices: UnitF4
};

// Work units: (image, tile row).
void ConvRange(int64_t begin, int64_t end, void* ctx) {
  const ConvJob& job = *static_cast<const ConvJob*>(ctx);
  const WinogradConvArgs& p = *job.args;
#ifdef XLAC_WINOGRAD_AVX512
  if (job.f4) {
    const F4Lanes lanes;
    for (int64_t unit = begin; unit < end; ++unit) {
      if (p.y_strides[3] == 1) {
        UnitF4<true>(p, lanes, unit / p.tiles[0], unit % p.tiles[0]);
      } else {
        UnitF4<false>(p, lanes, unit / p.tiles[0], unit % p.tiles[0]);
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
  const int64_t units = args.batch * args.tiles[0];
  if (units == 0 || args.features == 0 || args.tiles[1] == 0) return;
  ConvJob job{&args, false};
#ifdef XLAC_WINOGRAD_AVX512
  job.f4 = !portable && HasAvx512() && args.m == 4 && IsF4(args.bt, &kBt4[0][0], 6) && IsF4(args.at, &kAt4[0][0], 4);
#else
  (void)portable;
#endif
  const int64_t n = args.m + 2;
  const int64_t fmas = n * n * args.channels * args.features * units * args.tiles[1];
  xlac_rt_device_parallel_for(fmas < kMinParallelFmas ? nullptr : dev, units, ConvRange, &job);
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
