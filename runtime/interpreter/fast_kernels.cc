// Fast dot and convolution kernels (see fast_kernels.h for the bit-identity contract).
//
// Vectors are GCC/Clang vector extensions: lane-wise IEEE operations, so a lane computes exactly what scalar code
// computes. The kernels are compiled twice, for the baseline ISA and for AVX2 (without FMA: -ffp-contract=off
// keeps every product and sum rounded separately anyway), and the AVX2 copy runs when the CPU has it.
#include "runtime/interpreter/fast_kernels.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>
#include <type_traits>

#include "runtime/cpu/xlac_runtime.h"

namespace xlac::interp {
namespace {

#define XLAC_INLINE inline __attribute__((always_inline))

template <typename T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float V __attribute__((vector_size(32)));
  static constexpr int kLanes = 8;
};
template <>
struct VecOf<double> {
  typedef double V __attribute__((vector_size(32)));
  static constexpr int kLanes = 4;
};

template <typename T>
XLAC_INLINE typename VecOf<T>::V Load(const T* p) {
  typename VecOf<T>::V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
XLAC_INLINE void Store(T* p, typename VecOf<T>::V v) {
  std::memcpy(p, &v, sizeof v);
}
template <typename T>
XLAC_INLINE typename VecOf<T>::V Splat(T s) {
  typename VecOf<T>::V v;
  for (int l = 0; l < VecOf<T>::kLanes; ++l) v[l] = s;
  return v;
}

bool HasAvx2() {
  static const bool has = [] {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
#else
    return false;
#endif
  }();
  return has;
}

// ---- GEMM: out[g] = a[g] (m x k) * b[g]^T (n x k) ----

constexpr int kGemmMR = 4;        // rows per tile
constexpr int kGemmNV = 2;        // vectors per tile row
constexpr int64_t kGemmKC = 256;  // contraction block (accumulators go through `out` between blocks: exact)
constexpr int64_t kGemmRowChunk = 64;
constexpr int64_t kGemmPanelChunk = 16;

// One group of GemmNT's work: batches [g0, g1), panels [p0, p1) and contraction [k0, k1), whose B is packed in `bp`.
template <typename T>
struct GemmArgs {
  const T* a;   // [batch][m][k]
  const T* bp;  // [g - g0][p - p0][kk - k0][NR], zero-padded columns
  T* out;       // [batch][m][n]
  int64_t m, n, k;
  int64_t g0, p0, p1, k0, k1;
  int64_t row_chunks, panel_chunks;
  int64_t row_chunk, panel_chunk;  // rows and panels per block
};

template <typename T, int MR>
XLAC_INLINE void GemmTile(const T* a, int64_t lda, const T* bp, int64_t kc, T* c, int64_t ldc, int64_t cols,
                          bool first) {
  using V = typename VecOf<T>::V;
  constexpr int L = VecOf<T>::kLanes;
  constexpr int NR = kGemmNV * L;
  V acc[MR][kGemmNV];
  T tmp[MR][NR];
  if (first) {
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < kGemmNV; ++v) acc[r][v] = V{};  // +0, as the naive loop starts
  } else if (cols == NR) {
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < kGemmNV; ++v) acc[r][v] = Load(c + r * ldc + v * L);
  } else {
    for (int r = 0; r < MR; ++r) {
      for (int j = 0; j < NR; ++j) tmp[r][j] = j < cols ? c[r * ldc + j] : T(0);
      for (int v = 0; v < kGemmNV; ++v) acc[r][v] = Load(&tmp[r][v * L]);
    }
  }
  for (int64_t kk = 0; kk < kc; ++kk) {
    const T* brow = bp + kk * NR;
    V b[kGemmNV];
    for (int v = 0; v < kGemmNV; ++v) b[v] = Load(brow + v * L);
    for (int r = 0; r < MR; ++r) {
      V x = Splat<T>(a[r * lda + kk]);
      for (int v = 0; v < kGemmNV; ++v) acc[r][v] = acc[r][v] + x * b[v];
    }
  }
  if (cols == NR) {
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < kGemmNV; ++v) Store(c + r * ldc + v * L, acc[r][v]);
  } else {
    for (int r = 0; r < MR; ++r) {
      for (int v = 0; v < kGemmNV; ++v) Store(&tmp[r][v * L], acc[r][v]);
      for (int j = 0; j < cols; ++j) c[r * ldc + j] = tmp[r][j];
    }
  }
}

template <typename T>
XLAC_INLINE void GemmBlock(const GemmArgs<T>& g, int64_t block) {
  constexpr int64_t NR = kGemmNV * VecOf<T>::kLanes;
  int64_t per_batch = g.row_chunks * g.panel_chunks;
  int64_t b = g.g0 + block / per_batch;
  int64_t rc = (block % per_batch) / g.panel_chunks;
  int64_t pc = block % g.panel_chunks;
  int64_t i0 = rc * g.row_chunk, i1 = std::min(g.m, i0 + g.row_chunk);
  int64_t q0 = g.p0 + pc * g.panel_chunk, q1 = std::min(g.p1, q0 + g.panel_chunk);
  const T* a = g.a + b * g.m * g.k;
  T* out = g.out + b * g.m * g.n;
  const int64_t span = g.k1 - g.k0;
  for (int64_t kb = g.k0; kb < g.k1; kb += kGemmKC) {
    int64_t kc = std::min(kGemmKC, g.k1 - kb);
    for (int64_t p = q0; p < q1; ++p) {
      const T* bp = g.bp + (((b - g.g0) * (g.p1 - g.p0) + (p - g.p0)) * span + (kb - g.k0)) * NR;
      int64_t cols = std::min(NR, g.n - p * NR);
      int64_t i = i0;
      for (; i + kGemmMR <= i1; i += kGemmMR) {
        GemmTile<T, kGemmMR>(a + i * g.k + kb, g.k, bp, kc, out + i * g.n + p * NR, g.n, cols, kb == 0);
      }
      for (; i < i1; ++i) GemmTile<T, 1>(a + i * g.k + kb, g.k, bp, kc, out + i * g.n + p * NR, g.n, cols, kb == 0);
    }
  }
}

// Offset of index `i` of `d` (StridedDims).
int64_t OffsetOf(const StridedDims& d, int64_t i) {
  int64_t offset = 0;
  for (size_t x = d.sizes.size(); x-- > 0;) {
    offset += i % d.sizes[x] * d.strides[x];
    i /= d.sizes[x];
  }
  return offset;
}

// Offsets of consecutive indices of a StridedDims, one step at a time.
class StridedWalk {
 public:
  StridedWalk(const StridedDims& d, int64_t i) : d_(d), digits_(d.sizes.size()) {
    for (size_t x = d.sizes.size(); x-- > 0;) {
      digits_[x] = i % d.sizes[x];
      offset_ += digits_[x] * d.strides[x];
      i /= d.sizes[x];
    }
  }
  int64_t offset() const { return offset_; }
  void Next() {
    for (size_t x = digits_.size(); x-- > 0;) {
      offset_ += d_.strides[x];
      if (++digits_[x] < d_.sizes[x]) return;
      offset_ -= d_.sizes[x] * d_.strides[x];
      digits_[x] = 0;
    }
  }

 private:
  const StridedDims& d_;
  std::vector<int64_t> digits_;
  int64_t offset_ = 0;
};

// Packs columns [p * NR, p * NR + NR) of batch g of B, contraction [k0, k1), into dst[kk - k0][NR], widening each
// element from its storage S exactly; columns past n are +0.
template <typename T, typename S, typename Widen>
void PackPanel(const GemmOperand& b, const S* src, Widen widen, int64_t n, int64_t g, int64_t p, int64_t k0, int64_t k1,
               T* dst) {
  constexpr int64_t NR = kGemmNV * VecOf<T>::kLanes;
  const int64_t base = OffsetOf(b.batch, g);
  const int64_t cols = std::min(NR, n - p * NR);
  int64_t column[NR];
  for (int64_t j = 0; j < cols; ++j) column[j] = base + OffsetOf(b.columns, p * NR + j);
  StridedWalk kk(b.contraction, k0);
  for (int64_t r = k0; r < k1; ++r, kk.Next(), dst += NR) {
    const S* row = src + kk.offset();
    if (cols == NR) {
      for (int64_t j = 0; j < NR; ++j) dst[j] = widen(row[column[j]]);
    } else {
      for (int64_t j = 0; j < NR; ++j) dst[j] = j < cols ? widen(row[column[j]]) : T(0);
    }
  }
}

template <typename T>
void PackB(const GemmOperand& b, int64_t n, int64_t g, int64_t p, int64_t k0, int64_t k1, T* dst) {
  const PrimitiveType type = b.type;
  auto same = [](auto x) { return static_cast<T>(x); };
  if (type == PrimitiveType::kF64) {
    assert((std::is_same_v<T, double>)&&"f64 operands of an f32 GEMM");
    if constexpr (std::is_same_v<T, double>)
      PackPanel<T>(b, static_cast<const double*>(b.data), same, n, g, p, k0, k1, dst);
  } else if (type == PrimitiveType::kF32) {
    PackPanel<T>(b, static_cast<const float*>(b.data), same, n, g, p, k0, k1, dst);
  } else if (type == PrimitiveType::kBF16) {
    auto widen = [](uint16_t h) {
      uint32_t u = uint32_t{h} << 16;
      float f;
      std::memcpy(&f, &u, sizeof f);
      return static_cast<T>(f);
    };
    PackPanel<T>(b, static_cast<const uint16_t*>(b.data), widen, n, g, p, k0, k1, dst);
  } else if (ByteWidth(type) == 2) {
    auto widen = [type](uint16_t h) { return static_cast<T>(NarrowToFloat(type, h)); };
    PackPanel<T>(b, static_cast<const uint16_t*>(b.data), widen, n, g, p, k0, k1, dst);
  } else {
    auto widen = [type](uint8_t h) { return static_cast<T>(NarrowToFloat(type, h)); };
    PackPanel<T>(b, static_cast<const uint8_t*>(b.data), widen, n, g, p, k0, k1, dst);
  }
}

// How GemmNT splits B for packing: whole batches while each batch's packed B fits in the budget, else one batch at a
// time in groups of panels, and of the contraction too when even kGemmPanelChunk panels of all of it do not fit.
struct GemmGroups {
  int64_t batches, panels, k;
};

GemmGroups PlanGemmGroups(int64_t batch, int64_t panels, int64_t k, int64_t budget) {
  constexpr int64_t kRowBytes = 64;  // NR values of either compute type
  const int64_t per_batch = panels * k * kRowBytes;
  if (per_batch <= budget) return {std::clamp<int64_t>(budget / per_batch, 1, batch), panels, k};
  int64_t kg = k;
  if (kGemmPanelChunk * k * kRowBytes > budget) {
    kg = std::min(k, std::max(kGemmKC, budget / (kGemmPanelChunk * kRowBytes) / kGemmKC * kGemmKC));
  }
  return {1, std::clamp<int64_t>(budget / (kg * kRowBytes), 1, panels), kg};
}

// ---- convolution ----

constexpr int kConvMaxNV = 4;

template <typename T>
struct ConvArgs {
  const ConvProblem* p;
  const T* in;
  const T* kp;  // [kernel_spatial...][in_group][ozp]
  T* out;
  int64_t ozp;
  int64_t positions_per_block;
  int64_t positions;
  // Blocks split the output features too: lane_chunks chunks of lane_chunk features (batch-minor problems, whose
  // few positions share one pass over the kernel); otherwise one chunk of all of them.
  int64_t lane_chunk = 0, lane_chunks = 1;
  std::vector<int64_t> in_sstride, k_sstride;
  int64_t in_bstride, in_fstride;
};

// Sums of one output position over a block of lanes (output features oz0 + l), every lane reading the same
// input element per (tap, input feature): features of one feature group and one batch group.
template <typename T, int NV>
XLAC_INLINE void ConvBroadcast(const ConvArgs<T>& c, const int64_t* taps, int64_t ntaps, int64_t in_off, int64_t oz0,
                               T* acc_out) {
  using V = typename VecOf<T>::V;
  constexpr int L = VecOf<T>::kLanes;
  V acc[NV];
  for (int v = 0; v < NV; ++v) acc[v] = V{};
  int64_t in_group = c.p->in_group;
  for (int64_t t = 0; t < ntaps; ++t) {
    const T* ip = c.in + in_off + taps[2 * t];
    const T* kr = c.kp + taps[2 * t + 1] + oz0;
    for (int64_t iz = 0; iz < in_group; ++iz) {
      V x = Splat<T>(ip[iz * c.in_fstride]);
      for (int v = 0; v < NV; ++v) acc[v] = acc[v] + x * Load(kr + iz * c.ozp + v * L);
    }
  }
  for (int v = 0; v < NV; ++v) Store(acc_out + v * L, acc[v]);
}

// Two output positions whose taps use the same kernel offsets (interior positions): twice the independent
// accumulators, one kernel load for both. Each position's sums are exactly those of ConvBroadcast.
template <typename T, int NV>
XLAC_INLINE void ConvBroadcast2(const ConvArgs<T>& c, const int64_t* taps0, const int64_t* taps1, int64_t ntaps,
                                int64_t in_off0, int64_t in_off1, int64_t oz0, T* out0, T* out1) {
  using V = typename VecOf<T>::V;
  constexpr int L = VecOf<T>::kLanes;
  V acc0[NV], acc1[NV];
  for (int v = 0; v < NV; ++v) acc0[v] = acc1[v] = V{};
  int64_t in_group = c.p->in_group;
  for (int64_t t = 0; t < ntaps; ++t) {
    const T* ip0 = c.in + in_off0 + taps0[2 * t];
    const T* ip1 = c.in + in_off1 + taps1[2 * t];
    const T* kr = c.kp + taps0[2 * t + 1] + oz0;
    for (int64_t iz = 0; iz < in_group; ++iz) {
      V x0 = Splat<T>(ip0[iz * c.in_fstride]), x1 = Splat<T>(ip1[iz * c.in_fstride]);
      for (int v = 0; v < NV; ++v) {
        V k = Load(kr + iz * c.ozp + v * L);
        acc0[v] = acc0[v] + x0 * k;
        acc1[v] = acc1[v] + x1 * k;
      }
    }
  }
  for (int v = 0; v < NV; ++v) {
    Store(out0 + v * L, acc0[v]);
    Store(out1 + v * L, acc1[v]);
  }
}

// Depthwise (one input feature per group, one output feature per group, no batch groups): lane l reads input
// feature oz0 + l, so both operands are contiguous vectors.
template <typename T>
XLAC_INLINE void ConvDepthwise(const ConvArgs<T>& c, const int64_t* taps, int64_t ntaps, int64_t in_off, int64_t oz0,
                               T* acc_out) {
  using V = typename VecOf<T>::V;
  constexpr int L = VecOf<T>::kLanes;
  V acc[kConvMaxNV];
  for (int v = 0; v < kConvMaxNV; ++v) acc[v] = V{};
  for (int64_t t = 0; t < ntaps; ++t) {
    const T* ip = c.in + in_off + taps[2 * t] + oz0;
    const T* kr = c.kp + taps[2 * t + 1] + oz0;
    for (int v = 0; v < kConvMaxNV; ++v) acc[v] = acc[v] + Load(ip + v * L) * Load(kr + v * L);
  }
  for (int v = 0; v < kConvMaxNV; ++v) Store(acc_out + v * L, acc[v]);
}

// Batch-minor input, one batch per lane (see ConvProblem::batch_minor): both operands are contiguous vectors.
template <typename T>
XLAC_INLINE void ConvBatchLanes(const ConvArgs<T>& c, const int64_t* taps, int64_t ntaps, int64_t in_off, int64_t oz0,
                                T* acc_out) {
  using V = typename VecOf<T>::V;
  constexpr int L = VecOf<T>::kLanes;
  V acc[kConvMaxNV];
  for (int v = 0; v < kConvMaxNV; ++v) acc[v] = V{};
  int64_t in_group = c.p->in_group;
  for (int64_t t = 0; t < ntaps; ++t) {
    const T* ip = c.in + in_off + taps[2 * t];
    const T* kr = c.kp + taps[2 * t + 1] + oz0;
    for (int64_t iz = 0; iz < in_group; ++iz) {
      for (int v = 0; v < kConvMaxNV; ++v) {
        acc[v] = acc[v] + Load(ip + iz * c.in_fstride + v * L) * Load(kr + iz * c.ozp + v * L);
      }
    }
  }
  for (int v = 0; v < kConvMaxNV; ++v) Store(acc_out + v * L, acc[v]);
}

// Batch-minor lanes for several positions at one window position: each kernel vector is loaded once for all of
// them (A <= kMergedPositions). acc[i] holds position i's kMaxLanes sums, ip[i] its input row at this tap.
constexpr int kMergedPositions = 8;
template <typename T, int A>
XLAC_INLINE void ConvBatchLanesTap(const ConvArgs<T>& c, const T* kr, const T* const* ip, T* const* acc) {
  using V = typename VecOf<T>::V;
  constexpr int L = VecOf<T>::kLanes;
  int64_t in_group = c.p->in_group;
  for (int v = 0; v < kConvMaxNV; ++v) {
    V a[A];
    for (int i = 0; i < A; ++i) a[i] = Load(acc[i] + v * L);
    for (int64_t iz = 0; iz < in_group; ++iz) {
      V k = Load(kr + iz * c.ozp + v * L);
      for (int i = 0; i < A; ++i) a[i] = a[i] + Load(ip[i] + iz * c.in_fstride + v * L) * k;
    }
    for (int i = 0; i < A; ++i) Store(acc[i] + v * L, a[i]);
  }
}

template <typename T>
XLAC_INLINE void ConvBatchLanesTapN(int a, const ConvArgs<T>& c, const T* kr, const T* const* ip, T* const* acc) {
  switch (a) {
    case 1:
      return ConvBatchLanesTap<T, 1>(c, kr, ip, acc);
    case 2:
      return ConvBatchLanesTap<T, 2>(c, kr, ip, acc);
    case 3:
      return ConvBatchLanesTap<T, 3>(c, kr, ip, acc);
    case 4:
      return ConvBatchLanesTap<T, 4>(c, kr, ip, acc);
    case 5:
      return ConvBatchLanesTap<T, 5>(c, kr, ip, acc);
    case 6:
      return ConvBatchLanesTap<T, 6>(c, kr, ip, acc);
    case 7:
      return ConvBatchLanesTap<T, 7>(c, kr, ip, acc);
    default:
      return ConvBatchLanesTap<T, kMergedPositions>(c, kr, ip, acc);
  }
}

// ConvBatchLanes for all npos positions of a block at once (a depthwise filter gradient: a handful of kernel
// positions, each a sum over a whole image): window positions in row-major order outermost, each position
// accumulating at the window positions it has taps for, so every position still adds its taps in window order and
// each tap's input features in order, while the kernel is streamed once per block instead of once per position.
// acc_out: npos rows of kMaxLanes sums.
template <typename T>
XLAC_INLINE void ConvBatchLanesMerged(const ConvArgs<T>& c, const int64_t* taps, const int64_t* window,
                                      const int64_t* tap_start, int64_t npos, const int64_t* in_off, int64_t oz0,
                                      T* acc_out) {
  constexpr int64_t kMaxLanes = kConvMaxNV * VecOf<T>::kLanes;
  std::fill(acc_out, acc_out + npos * kMaxLanes, T(0));
  std::vector<int64_t> cur(tap_start, tap_start + npos);
  const T* ip[kMergedPositions];
  T* ap[kMergedPositions];
  while (true) {
    int64_t w = INT64_MAX;
    for (int64_t q = 0; q < npos; ++q) {
      if (cur[q] < tap_start[q + 1]) w = std::min(w, window[cur[q]]);
    }
    if (w == INT64_MAX) break;
    const T* kr = nullptr;
    int a = 0;
    for (int64_t q = 0; q < npos; ++q) {
      if (cur[q] >= tap_start[q + 1] || window[cur[q]] != w) continue;
      kr = c.kp + taps[2 * cur[q] + 1] + oz0;  // the kernel offset of window position w
      ip[a] = c.in + in_off[q] + taps[2 * cur[q]];
      ap[a] = acc_out + q * kMaxLanes;
      ++cur[q];
      if (++a == kMergedPositions) {
        ConvBatchLanesTapN<T>(a, c, kr, ip, ap);
        a = 0;
      }
    }
    if (a > 0) ConvBatchLanesTapN<T>(a, c, kr, ip, ap);
  }
}

// Any lanes: lane l reads from its own input offset (feature and batch group of output feature oz0 + l).
template <typename T>
XLAC_INLINE void ConvPerLane(const ConvArgs<T>& c, const int64_t* taps, int64_t ntaps, const int64_t* lane_off,
                             int64_t lanes, int64_t oz0, T* acc) {
  for (int64_t l = 0; l < lanes; ++l) acc[l] = T(0);
  int64_t in_group = c.p->in_group;
  for (int64_t t = 0; t < ntaps; ++t) {
    const T* kr = c.kp + taps[2 * t + 1] + oz0;
    for (int64_t iz = 0; iz < in_group; ++iz) {
      const T* krow = kr + iz * c.ozp;
      const T* ip = c.in + taps[2 * t] + iz * c.in_fstride;
      for (int64_t l = 0; l < lanes; ++l) acc[l] = acc[l] + ip[lane_off[l]] * krow[l];
    }
  }
}

template <typename T>
XLAC_INLINE void ConvBlock(const ConvArgs<T>& c, int64_t block) {
  constexpr int L = VecOf<T>::kLanes;
  constexpr int64_t kMaxLanes = kConvMaxNV * L;
  const ConvProblem& p = *c.p;
  size_t spatial = p.out_spatial.size();
  int64_t chunk = block % c.lane_chunks;
  int64_t q0 = block / c.lane_chunks * c.positions_per_block, q1 = std::min(c.positions, q0 + c.positions_per_block);
  int64_t oz_begin = c.lane_chunk > 0 ? chunk * c.lane_chunk : 0;
  int64_t oz_end = c.lane_chunk > 0 ? std::min(p.output_z, oz_begin + c.lane_chunk) : p.output_z;
  // Tap lists of every position of the block: (input spatial offset, kernel spatial offset) pairs in row-major
  // window order (the accumulation order), built once per block.
  std::vector<int64_t> taps, tap_start, out_base, batch_of, window;  // window: each tap's row-major window index
  std::vector<int64_t> o(spatial), k(spatial);
  for (int64_t q = q0; q < q1; ++q) {
    int64_t rest = q;
    for (size_t s = spatial; s-- > 0;) {
      o[s] = rest % p.out_spatial[s];
      rest /= p.out_spatial[s];
    }
    int64_t ob = rest;
    int64_t base = ob * p.out_batch_stride;
    for (size_t s = 0; s < spatial; ++s) base += o[s] * p.out_spatial_strides[s];
    out_base.push_back(base);
    batch_of.push_back(ob);
    tap_start.push_back(static_cast<int64_t>(taps.size() / 2));
    bool any = true;
    for (size_t s = 0; s < spatial; ++s) {
      if ((*p.taps)[s][static_cast<size_t>(o[s])].empty()) any = false;
    }
    if (!any) continue;
    std::fill(k.begin(), k.end(), 0);
    while (true) {
      int64_t in_sp = 0, k_sp = 0, wl = 0;
      for (size_t s = 0; s < spatial; ++s) {
        const auto& [x, w] = (*p.taps)[s][static_cast<size_t>(o[s])][static_cast<size_t>(k[s])];
        int64_t kw = p.reversal[s] ? p.kernel_spatial[s] - 1 - w : w;
        in_sp += x * c.in_sstride[s];
        k_sp += kw * c.k_sstride[s];
        wl = wl * p.kernel_spatial[s] + w;
      }
      taps.push_back(in_sp);
      taps.push_back(k_sp);
      window.push_back(wl);
      bool done = true;
      for (size_t s = spatial; s-- > 0;) {
        if (++k[s] < static_cast<int64_t>((*p.taps)[s][static_cast<size_t>(o[s])].size())) {
          done = false;
          break;
        }
        k[s] = 0;
      }
      if (done) break;
    }
  }
  tap_start.push_back(static_cast<int64_t>(taps.size() / 2));

  bool depthwise = p.in_group == 1 && p.out_group == 1 && p.depthwise_multiplier >= p.output_z;
  alignas(32) T acc[kMaxLanes];
  int64_t lane_off[kMaxLanes];
  for (int64_t oz0 = oz_begin; oz0 < oz_end;) {
    int64_t fg_end = (oz0 / p.out_group + 1) * p.out_group;
    int64_t bg_end = (oz0 / p.depthwise_multiplier + 1) * p.depthwise_multiplier;
    int64_t seg = std::min({oz_end, fg_end, bg_end}) - oz0;
    int mode;  // 0 broadcast, 1 depthwise, 2 per lane, 3 batch lanes
    int64_t lanes;
    int nv = 0;
    if (depthwise && oz0 + kMaxLanes <= oz_end) {
      mode = 1;
      lanes = kMaxLanes;
    } else if (p.batch_minor && oz0 + kMaxLanes <= oz_end) {
      mode = 3;
      lanes = kMaxLanes;
    } else if (seg >= L / 2 || seg >= oz_end - oz0) {
      mode = 0;
      lanes = std::min(seg, kMaxLanes);
      nv = static_cast<int>((lanes + L - 1) / L);
      if (nv == 3) nv = 4;
    } else {
      mode = 2;
      lanes = std::min(kMaxLanes, oz_end - oz0);
    }
    auto in_offset_of = [&](int64_t ob, int64_t oz) {
      int64_t batch = ob + (oz / p.depthwise_multiplier) * p.batch_group_size;
      return batch * c.in_bstride + (oz / p.out_group) * p.in_group * c.in_fstride;
    };
    if (mode == 3 && q1 - q0 >= 2) {
      std::vector<int64_t> in_off(static_cast<size_t>(q1 - q0));
      for (int64_t q = q0; q < q1; ++q) in_off[q - q0] = in_offset_of(batch_of[q - q0], oz0);
      std::vector<T> sums(static_cast<size_t>((q1 - q0) * kMaxLanes));
      ConvBatchLanesMerged<T>(c, taps.data(), window.data(), tap_start.data(), q1 - q0, in_off.data(), oz0,
                              sums.data());
      for (int64_t q = q0; q < q1; ++q) {
        T* out = c.out + out_base[q - q0];
        for (int64_t l = 0; l < lanes; ++l) out[(oz0 + l) * p.out_feature_stride] = sums[(q - q0) * kMaxLanes + l];
      }
      oz0 += lanes;
      continue;
    }
    for (int64_t q = q0; q < q1; ++q) {
      size_t qi = static_cast<size_t>(q - q0);
      const int64_t* tp = taps.data() + 2 * tap_start[qi];
      int64_t ntaps = tap_start[qi + 1] - tap_start[qi];
      int64_t ob = batch_of[qi];
      auto in_offset = [&](int64_t oz) { return in_offset_of(ob, oz); };
      if (mode == 0 && nv >= 2 && q + 1 < q1 && tap_start[qi + 2] - tap_start[qi + 1] == ntaps) {
        const int64_t* tp1 = tp + 2 * ntaps;
        bool same = true;
        for (int64_t t = 0; t < ntaps && same; ++t) same = tp[2 * t + 1] == tp1[2 * t + 1];
        if (same) {
          alignas(32) T acc1[kMaxLanes];
          int64_t off0 = in_offset(oz0), off1 = in_offset_of(batch_of[qi + 1], oz0);
          if (nv == 2)
            ConvBroadcast2<T, 2>(c, tp, tp1, ntaps, off0, off1, oz0, acc, acc1);
          else
            ConvBroadcast2<T, 4>(c, tp, tp1, ntaps, off0, off1, oz0, acc, acc1);
          T* out0 = c.out + out_base[qi];
          T* out1 = c.out + out_base[qi + 1];
          for (int64_t l = 0; l < lanes; ++l) {
            out0[(oz0 + l) * p.out_feature_stride] = acc[l];
            out1[(oz0 + l) * p.out_feature_stride] = acc1[l];
          }
          ++q;
          continue;
        }
      }
      if (mode == 0) {
        int64_t off = in_offset(oz0);
        if (nv == 1)
          ConvBroadcast<T, 1>(c, tp, ntaps, off, oz0, acc);
        else if (nv == 2)
          ConvBroadcast<T, 2>(c, tp, ntaps, off, oz0, acc);
        else
          ConvBroadcast<T, 4>(c, tp, ntaps, off, oz0, acc);
      } else if (mode == 1) {
        ConvDepthwise<T>(c, tp, ntaps, ob * c.in_bstride, oz0, acc);
      } else if (mode == 3) {
        ConvBatchLanes<T>(c, tp, ntaps, in_offset(oz0), oz0, acc);
      } else {
        for (int64_t l = 0; l < lanes; ++l) lane_off[l] = in_offset(oz0 + l);
        ConvPerLane<T>(c, tp, ntaps, lane_off, lanes, oz0, acc);
      }
      T* out = c.out + out_base[qi];
      for (int64_t l = 0; l < lanes; ++l) out[(oz0 + l) * p.out_feature_stride] = acc[l];
    }
    oz0 += lanes;
  }
}

// Baseline and AVX2 copies of the block functions.
#define XLAC_DEFINE_BLOCKS(T, SUFFIX)                                                                                 \
  void GemmBlock##SUFFIX(const GemmArgs<T>& g, int64_t b) { GemmBlock<T>(g, b); }                                     \
  __attribute__((target("avx2"))) void GemmBlockAvx2##SUFFIX(const GemmArgs<T>& g, int64_t b) { GemmBlock<T>(g, b); } \
  void ConvBlock##SUFFIX(const ConvArgs<T>& c, int64_t b) { ConvBlock<T>(c, b); }                                     \
  __attribute__((target("avx2"))) void ConvBlockAvx2##SUFFIX(const ConvArgs<T>& c, int64_t b) { ConvBlock<T>(c, b); } \
  void RunGemmBlock(const GemmArgs<T>& g, int64_t b) {                                                                \
    HasAvx2() ? GemmBlockAvx2##SUFFIX(g, b) : GemmBlock##SUFFIX(g, b);                                                \
  }                                                                                                                   \
  void RunConvBlock(const ConvArgs<T>& c, int64_t b) {                                                                \
    HasAvx2() ? ConvBlockAvx2##SUFFIX(c, b) : ConvBlock##SUFFIX(c, b);                                                \
  }
XLAC_DEFINE_BLOCKS(float, F32)
XLAC_DEFINE_BLOCKS(double, F64)
#undef XLAC_DEFINE_BLOCKS

struct BlockTask {
  const std::function<void(int64_t)>* fn;
  std::atomic<int64_t>* next;
  int64_t blocks;
};

void RunSlot(int64_t begin, int64_t end, void* ctx) {
  auto* task = static_cast<BlockTask*>(ctx);
  for (int64_t slot = begin; slot < end; ++slot) {
    // Blocks are handed out dynamically; a block's result does not depend on who computes it.
    for (int64_t b = task->next->fetch_add(1); b < task->blocks; b = task->next->fetch_add(1)) (*task->fn)(b);
  }
}

}  // namespace

int64_t KernelThreads(const DeviceContext& device) {
  int64_t threads = device.options != nullptr ? device.options->threads : 1;
  if (threads <= 0) threads = xlac_rt_available_cpus();
  int64_t devices = std::max<int64_t>(1, device.num_replicas * device.num_partitions);
  return std::max<int64_t>(1, threads / devices);
}

void ParallelBlocks(int64_t blocks, int64_t threads, const std::function<void(int64_t)>& fn) {
  if (threads <= 1 || blocks <= 1) {
    for (int64_t b = 0; b < blocks; ++b) fn(b);
    return;
  }
  int64_t slots = std::min(threads, blocks);
  XlacRtThreadPool* pool = xlac_rt_shared_thread_pool(static_cast<int>(slots));
  std::atomic<int64_t> next{0};
  BlockTask task{&fn, &next, blocks};
  xlac_rt_parallel_for(pool, slots, RunSlot, &task);
}

GemmOperand GemmOperandOf(const void* data, PrimitiveType type, const std::vector<int64_t>& dims,
                          const std::vector<int64_t>& batch, const std::vector<int64_t>& columns,
                          const std::vector<int64_t>& contraction) {
  std::vector<int64_t> strides = RowMajorStrides(dims);
  GemmOperand b;
  b.data = data;
  b.type = type;
  auto strided = [&](const std::vector<int64_t>& list, StridedDims& d) {
    for (int64_t x : list) {
      d.sizes.push_back(dims[static_cast<size_t>(x)]);
      d.strides.push_back(strides[static_cast<size_t>(x)]);
    }
  };
  strided(batch, b.batch);
  strided(columns, b.columns);
  strided(contraction, b.contraction);
  return b;
}

int64_t GemmPackBytes(int64_t batch, int64_t n, int64_t k, int64_t element_bytes, int64_t pack_budget) {
  if (batch * n * k == 0) return 0;
  const int64_t nr = 64 / element_bytes;
  const int64_t panels = (n + nr - 1) / nr;
  GemmGroups groups = PlanGemmGroups(batch, panels, k, pack_budget);
  return groups.batches * groups.panels * groups.k * 64;
}

template <typename T>
void GemmNT(const T* a, const GemmOperand& b, T* out, int64_t batch, int64_t m, int64_t n, int64_t k, int64_t threads,
            int64_t pack_budget) {
  if (batch * m * n == 0) return;
  if (k == 0) {
    std::fill(out, out + batch * m * n, T(0));
    return;
  }
  constexpr int64_t NR = kGemmNV * VecOf<T>::kLanes;
  static_assert(NR * sizeof(T) == 64, "PlanGemmGroups' row bytes");
  const int64_t panels = (n + NR - 1) / NR;
  const GemmGroups groups = PlanGemmGroups(batch, panels, k, pack_budget);
  std::vector<T, DefaultInitAllocator<T>> bp(static_cast<size_t>(groups.batches * groups.panels * groups.k * NR));
  // Each group is packed, then computed; an output's contraction groups come in ascending order, each continuing the
  // sums the last one stored in `out` (exact: they are T either way), so the grouping never changes a result.
  for (int64_t g0 = 0; g0 < batch; g0 += groups.batches) {
    const int64_t g1 = std::min(batch, g0 + groups.batches);
    for (int64_t p0 = 0; p0 < panels; p0 += groups.panels) {
      const int64_t p1 = std::min(panels, p0 + groups.panels);
      for (int64_t k0 = 0; k0 < k; k0 += groups.k) {
        const int64_t k1 = std::min(k, k0 + groups.k);
        ParallelBlocks((g1 - g0) * (p1 - p0), threads, [&](int64_t gp) {
          int64_t g = g0 + gp / (p1 - p0), p = p0 + gp % (p1 - p0);
          PackB<T>(b, n, g, p, k0, k1, bp.data() + gp * (k1 - k0) * NR);
        });
        // Blocks of kGemmRowChunk rows and kGemmPanelChunk panels, smaller when that leaves threads idle (a filter
        // gradient's GEMM: few rows and columns, a long contraction). Blocks never split a sum.
        const int64_t group_batches = g1 - g0, group_panels = p1 - p0;
        int64_t row_chunk = kGemmRowChunk, panel_chunk = kGemmPanelChunk;
        auto blocks_of = [&](int64_t rows, int64_t pans) {
          return group_batches * ((m + rows - 1) / rows) * ((group_panels + pans - 1) / pans);
        };
        while (blocks_of(row_chunk, panel_chunk) < 2 * threads && (panel_chunk > 1 || row_chunk > kGemmMR)) {
          if (panel_chunk > 1 &&
              (group_panels + panel_chunk / 2 - 1) / (panel_chunk / 2) > (group_panels + panel_chunk - 1) / panel_chunk)
            panel_chunk /= 2;
          else if (row_chunk > kGemmMR)
            row_chunk /= 2;
          else
            panel_chunk /= 2;
        }
        GemmArgs<T> args{a,
                         bp.data(),
                         out,
                         m,
                         n,
                         k,
                         g0,
                         p0,
                         p1,
                         k0,
                         k1,
                         (m + row_chunk - 1) / row_chunk,
                         (group_panels + panel_chunk - 1) / panel_chunk,
                         row_chunk,
                         panel_chunk};
        ParallelBlocks(group_batches * args.row_chunks * args.panel_chunks, threads,
                       [&](int64_t block) { RunGemmBlock(args, block); });
      }
    }
  }
}

template <typename T>
void GemmNT(const T* a, const T* b, T* out, int64_t batch, int64_t m, int64_t n, int64_t k, int64_t threads) {
  GemmOperand dense;
  dense.data = b;
  dense.type = std::is_same_v<T, double> ? PrimitiveType::kF64 : PrimitiveType::kF32;
  dense.batch = {{batch}, {n * k}};
  dense.columns = {{n}, {k}};
  dense.contraction = {{k}, {1}};
  GemmNT<T>(a, dense, out, batch, m, n, k, threads);
}

template <typename T>
void ConvCanonical(const ConvProblem& p, const T* input, const T* kernel, T* out, int64_t threads) {
  constexpr int64_t L = VecOf<T>::kLanes;
  int64_t positions = p.out_batch;
  for (int64_t d : p.out_spatial) positions *= d;
  if (positions * p.output_z == 0) return;
  ConvArgs<T> c;
  c.p = &p;
  c.in = input;
  c.out = out;
  // Room for whole vectors past the last feature: lanes past a block's end compute values nobody stores. A block's
  // vectors end before its last lane plus two vectors (three vectors' lanes run as four).
  c.ozp = (p.output_z + L - 1) / L * L + 2 * L;
  int64_t kernel_rows = p.in_group;
  for (int64_t d : p.kernel_spatial) kernel_rows *= d;
  // Rows of output_z values and zeros up to ozp (a filter gradient's "kernel" is a whole activation: no zero-fill
  // of all of it first).
  std::vector<T, DefaultInitAllocator<T>> kp(static_cast<size_t>(kernel_rows * c.ozp));
  ParallelBlocks((kernel_rows + 4095) / 4096, threads, [&](int64_t b) {
    for (int64_t r = b * 4096; r < std::min(kernel_rows, (b + 1) * 4096); ++r) {
      std::copy(kernel + r * p.output_z, kernel + (r + 1) * p.output_z, kp.begin() + r * c.ozp);
      std::fill(kp.begin() + r * c.ozp + p.output_z, kp.begin() + (r + 1) * c.ozp, T(0));
    }
  });
  c.kp = kp.data();
  size_t spatial = p.out_spatial.size();
  c.in_sstride.assign(spatial, 0);
  c.k_sstride.assign(spatial, 0);
  int64_t in_stride = p.batch_minor ? p.input_z * p.in_batch : p.input_z, k_stride = p.in_group * c.ozp;
  for (size_t s = spatial; s-- > 0;) {
    c.in_sstride[s] = in_stride;
    c.k_sstride[s] = k_stride;
    in_stride *= p.in_spatial[s];
    k_stride *= p.kernel_spatial[s];
  }
  c.in_bstride = p.batch_minor ? 1 : in_stride;
  c.in_fstride = p.batch_minor ? p.in_batch : 1;
  c.positions = positions;
  c.positions_per_block = std::clamp<int64_t>(positions / (std::max<int64_t>(threads, 1) * 8), 1, 64);
  if (p.batch_minor && positions <= 64) {
    // Few positions with long sums (depthwise filter gradients): blocks of output feature chunks, each with all the
    // positions it can share a pass over the kernel with (ConvBatchLanesMerged), split further only to give every
    // thread work.
    constexpr int64_t kMaxLanes = kConvMaxNV * L;
    c.lane_chunk = kMaxLanes;
    c.lane_chunks = (p.output_z + kMaxLanes - 1) / kMaxLanes;
    int64_t position_blocks = std::min(positions, (std::max<int64_t>(threads, 1) + c.lane_chunks - 1) / c.lane_chunks);
    c.positions_per_block = (positions + position_blocks - 1) / position_blocks;
  }
  int64_t blocks = (positions + c.positions_per_block - 1) / c.positions_per_block * c.lane_chunks;
  ParallelBlocks(blocks, threads, [&](int64_t block) { RunConvBlock(c, block); });
}

template <typename T>
void PermuteInto(const T* data, const std::vector<int64_t>& dims, const std::vector<int64_t>& order, T* out) {
  std::vector<int64_t> strides = RowMajorStrides(dims);
  size_t rank = order.size();
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  if (rank == 0) {
    out[0] = data[0];
    return;
  }
  std::vector<int64_t> pd(rank), ps(rank);
  for (size_t i = 0; i < rank; ++i) {
    pd[i] = dims[static_cast<size_t>(order[i])];
    ps[i] = strides[static_cast<size_t>(order[i])];
  }
  int64_t inner = pd[rank - 1], inner_stride = ps[rank - 1];
  // Transposes that change the minor dimension (an NCHW activation into NHWC): the row loop below would read one
  // element per cache line. Instead, tiles of kTile x kTile elements over the source's contiguous dimension and the
  // result's, each tile's source lines reused from L1 for all its rows.
  constexpr int64_t kTile = 16;
  size_t p = rank;
  for (size_t i = 0; i + 1 < rank; ++i) {
    if (ps[i] == 1 && pd[i] > 1) p = i;
  }
  if (inner_stride != 1 && p < rank && inner >= kTile / 2 && pd[p] >= kTile / 2) {
    std::vector<int64_t> os = RowMajorStrides(pd);
    std::vector<int64_t> rest = pd;  // every dim but the two tiled ones
    rest[p] = 1;
    rest[rank - 1] = 1;
    std::vector<int64_t> index(rank, 0);
    int64_t rows = pd[p], row_stride = os[p];
    do {
      int64_t src = 0, dst = 0;
      for (size_t i = 0; i < rank; ++i) {
        src += index[i] * ps[i];
        dst += index[i] * os[i];
      }
      for (int64_t a0 = 0; a0 < rows; a0 += kTile) {
        int64_t a1 = std::min(rows, a0 + kTile);
        for (int64_t b0 = 0; b0 < inner; b0 += kTile) {
          int64_t b1 = std::min(inner, b0 + kTile);
          for (int64_t b = b0; b < b1; ++b) {
            const T* from = data + src + b * inner_stride;
            T* to = out + dst + b;
            for (int64_t a = a0; a < a1; ++a) to[a * row_stride] = from[a];
          }
        }
      }
    } while (NextIndex(index, rest));
    return;
  }
  std::vector<int64_t> index(rank - 1, 0);
  std::vector<int64_t> outer_dims(pd.begin(), pd.end() - 1);
  int64_t pos = 0;
  do {
    int64_t off = 0;
    for (size_t i = 0; i + 1 < rank; ++i) off += index[i] * ps[i];
    const T* src = data + off;
    if (inner_stride == 1) {
      std::copy(src, src + inner, out + pos);
    } else {
      for (int64_t j = 0; j < inner; ++j) out[pos + j] = src[j * inner_stride];
    }
    pos += inner;
  } while (NextIndex(index, outer_dims));
}

template void GemmNT<float>(const float*, const GemmOperand&, float*, int64_t, int64_t, int64_t, int64_t, int64_t,
                            int64_t);
template void GemmNT<double>(const double*, const GemmOperand&, double*, int64_t, int64_t, int64_t, int64_t, int64_t,
                             int64_t);
template void GemmNT<float>(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t);
template void GemmNT<double>(const double*, const double*, double*, int64_t, int64_t, int64_t, int64_t, int64_t);
template void ConvCanonical<float>(const ConvProblem&, const float*, const float*, float*, int64_t);
template void ConvCanonical<double>(const ConvProblem&, const double*, const double*, double*, int64_t);
#define XLAC_PERMUTE(T) \
  template void PermuteInto<T>(const T*, const std::vector<int64_t>&, const std::vector<int64_t>&, T*);
XLAC_PERMUTE(uint8_t)
XLAC_PERMUTE(uint16_t)
XLAC_PERMUTE(uint32_t)
XLAC_PERMUTE(int64_t)
XLAC_PERMUTE(uint64_t)
XLAC_PERMUTE(float)
XLAC_PERMUTE(double)
XLAC_PERMUTE(c64)
XLAC_PERMUTE(c128)
#undef XLAC_PERMUTE

}  // namespace xlac::interp
