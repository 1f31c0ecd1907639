// dot (general batch/contracting dimensions) and convolution (strides, padding, lhs/rhs dilation, window reversal,
// feature and batch groups, any dim_labels).
//
// As in XLA's evaluator, operands are first converted to the result type and products are accumulated
// sequentially in its compute type (f32 for narrow floats, 64-bit for integers), rounding once at the end.
#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>

#include "ir/tpu_numerics.h"
#include "runtime/interpreter/fast_kernels.h"
#include "runtime/interpreter/internal.h"

namespace xlac::interp {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

absl::StatusOr<Literal> ToType(const Literal& lit, PrimitiveType type) {
  if (lit.shape().element_type == type) return lit;
  return ConvertLiteral(lit, type);
}

// `lit` in `type`: the operand itself when it has that type already (no copy), else a converted copy in `storage`.
absl::StatusOr<const Literal*> AsType(const Literal& lit, PrimitiveType type, std::optional<Literal>& storage) {
  if (lit.shape().element_type == type) return &lit;
  XLAC_ASSIGN_OR_RETURN(Literal converted, ConvertLiteral(lit, type));
  storage.emplace(std::move(converted));
  return &*storage;
}

template <typename C>
inline void Accumulate(C& acc, C a, C b) {
  if constexpr (std::is_same_v<C, bool>)
    acc = acc || (a && b);
  else if constexpr (std::is_same_v<C, int64_t>)
    acc = static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else
    acc += a * b;
}

// Gathers `lit` into [groups][rows][k] order: the dims of each list in their order, row-major within the list.
template <typename C>
std::vector<C> Canonicalize(const std::vector<C>& data, const std::vector<int64_t>& dims,
                            const std::vector<std::vector<int64_t>>& lists) {
  std::vector<int64_t> order;
  for (const auto& list : lists) order.insert(order.end(), list.begin(), list.end());
  if constexpr (std::is_same_v<C, bool>) {  // std::vector<bool> has no data()
    std::vector<uint8_t> bytes(data.begin(), data.end()), out(data.size());
    PermuteInto<uint8_t>(bytes.data(), dims, order, out.data());
    return std::vector<bool>(out.begin(), out.end());
  } else {
    std::vector<C> out(data.size());
    PermuteInto<C>(data.data(), dims, order, out.data());
    return out;
  }
}

// Canonicalize(LoadAll<C>(lit), ...) without holding two compute-type copies at once: an operand already in order
// is loaded as it is, any other is permuted in its storage type first (a bf16 weight: 2 + 4 bytes per element at
// the peak instead of 4 + 4; a 128256 x 3072 embedding table is 0.8 GB less per device).
template <typename C>
std::vector<C> LoadCanonical(const Literal& lit, const std::vector<int64_t>& dims,
                             const std::vector<std::vector<int64_t>>& lists) {
  std::vector<int64_t> order;
  for (const auto& list : lists) order.insert(order.end(), list.begin(), list.end());
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) identity &= order[i] == static_cast<int64_t>(i);
  if (identity) return LoadAll<C>(lit);
  const int64_t width = ByteWidth(lit.shape().element_type);
  if (width != 1 && width != 2 && width != 4 && width != 8) return Canonicalize<C>(LoadAll<C>(lit), dims, lists);
  Shape permuted = lit.shape();
  permuted.ClearLayout();
  for (size_t i = 0; i < order.size(); ++i) permuted.dimensions[i] = dims[static_cast<size_t>(order[i])];
  Literal storage = Literal::CreateUninitialized(permuted);
  auto permute = [&](auto tag) {
    using T = decltype(tag);
    PermuteInto<T>(reinterpret_cast<const T*>(lit.raw_data()), dims, order,
                   reinterpret_cast<T*>(storage.mutable_raw_data()));
  };
  if (width == 1) permute(uint8_t{});
  if (width == 2) permute(uint16_t{});
  if (width == 4) permute(uint32_t{});
  if (width == 8) permute(uint64_t{});
  return LoadAll<C>(storage);
}

int64_t Product(const std::vector<int64_t>& dims, const std::vector<int64_t>& which) {
  int64_t p = 1;
  for (int64_t d : which) p *= dims[static_cast<size_t>(d)];
  return p;
}

// A convolution whose window covers the whole input in every spatial dimension (one output position; no padding,
// dilation or reversal; no groups), as the filter gradients of 1x1 convolutions are: each output is one sum over
// (window position, input feature) in row-major order, which is GemmNT's ascending contraction order over
// [batch][spatial...][feature] x [output feature][spatial...][feature] operands. The same products in the same
// order from +0, so the bits ConvCanonical computes, with the GEMM's blocking instead of a pass over the whole
// kernel per pair of outputs. False (nothing written) for other convolutions.
template <typename T>
bool WholeWindowConvolution(const ConvolutionDimensionNumbers& dn, const std::vector<int64_t>& ld,
                            const std::vector<int64_t>& rd, const std::vector<int64_t>& od,
                            const std::vector<WindowTaps>& taps, const Window& window, int64_t feature_groups,
                            int64_t batch_groups, const T* a, const T* b, T* out, int64_t threads) {
  if (feature_groups != 1 || batch_groups != 1) return false;
  size_t spatial = dn.input_spatial_dimensions.size();
  for (size_t s = 0; s < spatial; ++s) {
    int64_t size = ld[dn.input_spatial_dimensions[s]];
    if (od[dn.output_spatial_dimensions[s]] != 1 || window.dimensions[s].window_reversal ||
        rd[dn.kernel_spatial_dimensions[s]] != size || static_cast<int64_t>(taps[s][0].size()) != size) {
      return false;
    }
    for (int64_t w = 0; w < size; ++w) {
      if (taps[s][0][static_cast<size_t>(w)] != std::pair<int64_t, int64_t>{w, w}) return false;
    }
  }
  int64_t m = ld[dn.input_batch_dimension], n = rd[dn.kernel_output_feature_dimension];
  int64_t lhs_count = 1;
  for (int64_t d : ld) lhs_count *= d;
  if (m * n == 0) return false;
  int64_t k = lhs_count / m;
  std::vector<int64_t> a_order{dn.input_batch_dimension}, b_order{dn.kernel_output_feature_dimension};
  for (size_t s = 0; s < spatial; ++s) {
    a_order.push_back(dn.input_spatial_dimensions[s]);
    b_order.push_back(dn.kernel_spatial_dimensions[s]);
  }
  a_order.push_back(dn.input_feature_dimension);
  b_order.push_back(dn.kernel_input_feature_dimension);
  // PermuteInto and GemmNT write every element; GemmNT reads the kernel in place.
  std::vector<T, DefaultInitAllocator<T>> a_c(static_cast<size_t>(lhs_count));
  std::vector<T, DefaultInitAllocator<T>> product(static_cast<size_t>(m * n));
  PermuteInto<T>(a, ld, a_order, a_c.data());
  const std::vector<int64_t> b_contraction(b_order.begin() + 1, b_order.end());
  GemmOperand b_in_place = GemmOperandOf(b, std::is_same_v<T, double> ? PrimitiveType::kF64 : PrimitiveType::kF32, rd,
                                         {}, {b_order[0]}, b_contraction);
  GemmNT<T>(a_c.data(), b_in_place, product.data(), 1, m, n, k, threads);
  std::vector<int64_t> os = RowMajorStrides(od);
  int64_t batch_stride = os[dn.output_batch_dimension], feature_stride = os[dn.output_feature_dimension];
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) out[i * batch_stride + j * feature_stride] = product[i * n + j];
  }
  return true;
}

}  // namespace

// run(a, b) under TPU numerics (ir/tpu_numerics.h): f32 operands rounded to bf16 (DEFAULT), or the 3-pass bf16 split
// (HIGH): (run(a_hi, b_lo) + run(a_lo, b_hi)) + run(a_hi, b_hi). Modes not modeled are errors.
template <typename C, typename Run>
absl::StatusOr<std::vector<C>> WithTpuNumerics(const Instruction& inst, bool tpu_numerics, std::vector<C> a,
                                               std::vector<C> b, const Run& run) {
  if (!tpu_numerics) return run(a, b);
  std::string why;
  TpuDotMode mode = TpuDotModeOf(inst, &why);
  if (mode == TpuDotMode::kUnsupported) return Unsupported(inst, "TPU numerics do not model {} yet", why);
  if constexpr (std::is_same_v<C, float>) {
    if (mode == TpuDotMode::kBf16Operands) {
      for (float& v : a) v = RoundToBf16(v);
      for (float& v : b) v = RoundToBf16(v);
    } else if (mode == TpuDotMode::kBf16x3) {
      auto split = [](const std::vector<float>& x, std::vector<float>& hi, std::vector<float>& lo) {
        hi.resize(x.size());
        lo.resize(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
          hi[i] = RoundToBf16(x[i]);
          lo[i] = std::isfinite(hi[i]) ? RoundToBf16(x[i] - hi[i]) : 0.0f;
        }
      };
      std::vector<float> a_hi, a_lo, b_hi, b_lo;
      split(a, a_hi, a_lo);
      split(b, b_hi, b_lo);
      std::vector<float> out = run(a_hi, b_lo);
      std::vector<float> mid = run(a_lo, b_hi);
      std::vector<float> top = run(a_hi, b_hi);
      for (size_t i = 0; i < out.size(); ++i) out[i] = (out[i] + mid[i]) + top[i];
      return out;
    }
  }
  return run(a, b);
}

// result = run(a, b) under TPU numerics (WithTpuNumerics).
template <typename C, typename Run>
absl::Status ComputeInto(Literal& result, const Instruction& inst, bool tpu_numerics, std::vector<C> a,
                         std::vector<C> b, const Run& run) {
  XLAC_ASSIGN_OR_RETURN(std::vector<C> out, WithTpuNumerics<C>(inst, tpu_numerics, std::move(a), std::move(b), run));
  StoreAll<C>(result, out);
  return absl::OkStatus();
}

absl::StatusOr<Literal> EvalDot(const Instruction& inst, Operands operands, bool tpu_numerics, int64_t threads) {
  if (operands.size() != 2 || inst.FindAttr("sparsity") != nullptr) {
    return Unsupported(inst, "sparse dot is not supported");
  }
  for (const std::string& p : inst.FindAttr("operand_precision")
                                  ? inst.FindAttr("operand_precision")->get<std::vector<std::string>>()
                                  : std::vector<std::string>{}) {
    if (p == "PACKED_NIBBLE" || p == "packed_nibble") return Unsupported(inst, "packed-nibble dot is not supported");
  }
  PrimitiveType type = inst.shape().element_type;
  std::optional<Literal> lhs_storage, rhs_storage;
  XLAC_ASSIGN_OR_RETURN(const Literal* lhs, AsType(*operands[0], type, lhs_storage));
  // The GEMM of an f32 or f64 dot reads a narrower float rhs (bf16 weights) in place, widening it as convert does.
  const bool rhs_in_place = !tpu_numerics && (type == PrimitiveType::kF32 || type == PrimitiveType::kF64) &&
                            KindOf(operands[1]->shape().element_type) == NumKind::kFloat;
  const Literal* rhs = operands[1];
  if (!rhs_in_place) {
    XLAC_ASSIGN_OR_RETURN(rhs, AsType(*operands[1], type, rhs_storage));
  }
  const std::vector<int64_t>& ld = lhs->shape().dimensions;
  const std::vector<int64_t>& rd = rhs->shape().dimensions;
  const std::vector<int64_t>& lb = IntList(inst, "lhs_batch_dims");
  const std::vector<int64_t>& rb = IntList(inst, "rhs_batch_dims");
  const std::vector<int64_t>& lc = IntList(inst, "lhs_contracting_dims");
  const std::vector<int64_t>& rc = IntList(inst, "rhs_contracting_dims");
  std::vector<int64_t> lf, rf;
  for (int64_t d = 0; d < static_cast<int64_t>(ld.size()); ++d) {
    if (!Contains(lb, d) && !Contains(lc, d)) lf.push_back(d);
  }
  for (int64_t d = 0; d < static_cast<int64_t>(rd.size()); ++d) {
    if (!Contains(rb, d) && !Contains(rc, d)) rf.push_back(d);
  }
  int64_t batch = Product(ld, lb), m = Product(ld, lf), n = Product(rd, rf), k = Product(ld, lc);
  // GemmNT and ComputeInto store every element.
  Literal result = Literal::CreateUninitialized(inst.shape());
  if (result.element_count() != batch * m * n) return Error(inst, "result shape does not match the dimensions");
  if (!tpu_numerics && (type == PrimitiveType::kF32 || type == PrimitiveType::kF64)) {
    // Storage is the compute type: the lhs permuted straight from storage, the rhs read in place by the GEMM's
    // packing, the product written into the result.
    auto direct = [&](auto tag) {
      using T = decltype(tag);
      auto gather = [](const Literal& lit, const std::vector<int64_t>& dims,
                       const std::vector<std::vector<int64_t>>& lists) {
        std::vector<int64_t> order;
        for (const auto& list : lists) order.insert(order.end(), list.begin(), list.end());
        std::vector<T, DefaultInitAllocator<T>> out(static_cast<size_t>(lit.element_count()));  // all gathered
        PermuteInto<T>(reinterpret_cast<const T*>(lit.raw_data()), dims, order, out.data());
        return out;
      };
      auto a = gather(*lhs, ld, {lb, lf, lc});
      GemmNT<T>(a.data(), GemmOperandOf(rhs->raw_data(), rhs->shape().element_type, rd, rb, rf, rc),
                reinterpret_cast<T*>(result.mutable_raw_data()), batch, m, n, k, threads);
    };
    if (type == PrimitiveType::kF32)
      direct(float{});
    else
      direct(double{});
    return result;
  }
  if (!tpu_numerics && KindOf(type) == NumKind::kFloat) {
    // Narrow floats: the lhs widened to f32 in the GEMM's order, the rhs widened panel by panel as the GEMM packs it
    // (a bf16 lm_head weight is never held as f32).
    std::vector<float> a = LoadCanonical<float>(*lhs, ld, {lb, lf, lc});
    std::vector<float> out(static_cast<size_t>(batch * m * n));
    GemmNT<float>(a.data(), GemmOperandOf(rhs->raw_data(), type, rd, rb, rf, rc), out.data(), batch, m, n, k, threads);
    StoreAll<float>(result, out);
    return result;
  }
  absl::Status tpu_status;
  DispatchKind(KindOf(type), [&](auto tag) {
    using C = decltype(tag);
    std::vector<C> a = LoadCanonical<C>(*lhs, ld, {lb, lf, lc});
    std::vector<C> b = LoadCanonical<C>(*rhs, rd, {rb, rf, rc});
    auto run = [&](const std::vector<C>& x, const std::vector<C>& y) {
      std::vector<C> out(static_cast<size_t>(batch * m * n));
      if constexpr (kIsFloat<C>) {
        GemmNT<C>(x.data(), y.data(), out.data(), batch, m, n, k, threads);
        return out;
      }
      for (int64_t g = 0; g < batch; ++g) {
        for (int64_t i = 0; i < m; ++i) {
          size_t arow = static_cast<size_t>((g * m + i) * k);
          for (int64_t j = 0; j < n; ++j) {
            size_t brow = static_cast<size_t>((g * n + j) * k);
            C acc = C(0);
            for (int64_t kk = 0; kk < k; ++kk) Accumulate<C>(acc, x[arow + kk], y[brow + kk]);
            out[static_cast<size_t>((g * m + i) * n + j)] = acc;
          }
        }
      }
      return out;
    };
    tpu_status = ComputeInto<C>(result, inst, tpu_numerics, std::move(a), std::move(b), run);
  });
  if (!tpu_status.ok()) return tpu_status;
  return result;
}

absl::StatusOr<Literal> EvalConvolution(const Instruction& inst, Operands operands, bool tpu_numerics,
                                        int64_t threads) {
  const AttrValue* dn_attr = inst.FindAttr("dim_labels");
  if (operands.size() != 2 || dn_attr == nullptr || dn_attr->kind != AttrKind::kConvDnums) {
    return Error(inst, "malformed convolution");
  }
  const ConvolutionDimensionNumbers& dn = dn_attr->get<ConvolutionDimensionNumbers>();
  Window window;
  if (const Window* w = WindowAttr(inst)) window = *w;
  size_t spatial = dn.input_spatial_dimensions.size();
  if (window.dimensions.size() != spatial) {
    if (!window.dimensions.empty()) return Error(inst, "window rank differs from the spatial rank");
    window.dimensions.resize(spatial);
    for (size_t i = 0; i < spatial; ++i) window.dimensions[i].size = 1;
  }
  PrimitiveType type = inst.shape().element_type;
  std::optional<Literal> lhs_storage, rhs_storage;
  XLAC_ASSIGN_OR_RETURN(const Literal* lhs_ptr, AsType(*operands[0], type, lhs_storage));
  XLAC_ASSIGN_OR_RETURN(const Literal* rhs_ptr, AsType(*operands[1], type, rhs_storage));
  const Literal& lhs = *lhs_ptr;
  const Literal& rhs = *rhs_ptr;
  const std::vector<int64_t>& ld = lhs.shape().dimensions;
  const std::vector<int64_t>& rd = rhs.shape().dimensions;
  std::vector<int64_t> ls = RowMajorStrides(ld), rs = RowMajorStrides(rd);
  int64_t feature_groups = IntAttr(inst, "feature_group_count", 1);
  int64_t batch_groups = IntAttr(inst, "batch_group_count", 1);
  int64_t input_z = ld[dn.input_feature_dimension];
  int64_t input_batch = ld[dn.input_batch_dimension];
  int64_t output_z = rd[dn.kernel_output_feature_dimension];
  if (feature_groups < 1 || batch_groups < 1 || input_z % feature_groups != 0 || input_batch % batch_groups != 0 ||
      output_z % feature_groups != 0 || output_z % batch_groups != 0) {
    return Error(inst, "group counts do not divide the feature/batch dimensions");
  }
  int64_t batch_group_size = input_batch / batch_groups;
  int64_t in_group = input_z / feature_groups;
  int64_t out_group = output_z / feature_groups;
  int64_t depthwise_multiplier = output_z / batch_groups;
  std::vector<int64_t> window_dims(spatial);
  std::vector<WindowTaps> taps(spatial);
  for (size_t i = 0; i < spatial; ++i) {
    window_dims[i] = rd[dn.kernel_spatial_dimensions[i]];
    if (window.dimensions[i].size != window_dims[i]) return Error(inst, "window size differs from the kernel");
    taps[i] = MakeWindowTaps(window.dimensions[i], ld[dn.input_spatial_dimensions[i]],
                             inst.shape().dimensions[dn.output_spatial_dimensions[i]]);
  }

  // ConvCanonical and ComputeInto store every element.
  Literal result = Literal::CreateUninitialized(inst.shape());
  const std::vector<int64_t>& od = inst.shape().dimensions;
  // The fast path: operands permuted to [batch][spatial...][feature] and [spatial...][in][out] (ConvCanonical).
  auto FastConvolution = [&]<typename T>(const T* a, const T* b, T* out) {
    if (WholeWindowConvolution<T>(dn, ld, rd, od, taps, window, feature_groups, batch_groups, a, b, out, threads)) {
      return;
    }
    ConvProblem p;
    p.in_batch = input_batch;
    p.input_z = input_z;
    p.out_batch = od[dn.output_batch_dimension];
    p.output_z = output_z;
    p.in_group = in_group;
    p.out_group = out_group;
    p.depthwise_multiplier = depthwise_multiplier;
    p.batch_group_size = batch_group_size;
    std::vector<int64_t> os = RowMajorStrides(od);
    std::vector<int64_t> in_order{dn.input_batch_dimension}, k_order;
    for (size_t s = 0; s < spatial; ++s) {
      p.in_spatial.push_back(ld[dn.input_spatial_dimensions[s]]);
      p.kernel_spatial.push_back(window_dims[s]);
      p.out_spatial.push_back(od[dn.output_spatial_dimensions[s]]);
      p.reversal.push_back(window.dimensions[s].window_reversal);
      p.out_spatial_strides.push_back(os[dn.output_spatial_dimensions[s]]);
      in_order.push_back(dn.input_spatial_dimensions[s]);
      k_order.push_back(dn.kernel_spatial_dimensions[s]);
    }
    in_order.push_back(dn.input_feature_dimension);
    p.batch_minor = batch_groups > 1 && feature_groups == 1 && depthwise_multiplier == 1 && batch_group_size == 1;
    if (p.batch_minor) std::rotate(in_order.begin(), in_order.begin() + 1, in_order.end());
    k_order.push_back(dn.kernel_input_feature_dimension);
    k_order.push_back(dn.kernel_output_feature_dimension);
    p.taps = &taps;
    p.out_batch_stride = os[dn.output_batch_dimension];
    p.out_feature_stride = os[dn.output_feature_dimension];
    // Operands already in the canonical order (NHWC inputs, HWIO kernels) are used as they are.
    auto canonical = [](const T* data, const std::vector<int64_t>& dims, const std::vector<int64_t>& order,
                        std::vector<T, DefaultInitAllocator<T>>& storage) {
      bool identity = true;
      for (size_t i = 0; i < order.size(); ++i) identity = identity && order[i] == static_cast<int64_t>(i);
      if (identity) return data;
      int64_t count = 1;
      for (int64_t d : dims) count *= d;
      storage.resize(static_cast<size_t>(count));
      PermuteInto<T>(data, dims, order, storage.data());
      return static_cast<const T*>(storage.data());
    };
    std::vector<T, DefaultInitAllocator<T>> in_storage, k_storage;  // PermuteInto writes every element
    const T* in_c = canonical(a, ld, in_order, in_storage);
    const T* k_c = canonical(b, rd, k_order, k_storage);
    ConvCanonical<T>(p, in_c, k_c, out, threads);
  };
  absl::Status tpu_status;
  if (!tpu_numerics && (type == PrimitiveType::kF32 || type == PrimitiveType::kF64)) {
    // Storage is the compute type: straight from the operands' storage into the result's.
    if (type == PrimitiveType::kF32) {
      FastConvolution(reinterpret_cast<const float*>(lhs.raw_data()), reinterpret_cast<const float*>(rhs.raw_data()),
                      reinterpret_cast<float*>(result.mutable_raw_data()));
    } else {
      FastConvolution(reinterpret_cast<const double*>(lhs.raw_data()), reinterpret_cast<const double*>(rhs.raw_data()),
                      reinterpret_cast<double*>(result.mutable_raw_data()));
    }
    return result;
  }
  DispatchKind(KindOf(type), [&](auto tag) {
    using C = decltype(tag);
    std::vector<C> a = LoadAll<C>(lhs);
    std::vector<C> b = LoadAll<C>(rhs);
    auto run = [&](const std::vector<C>& a, const std::vector<C>& b) {
      std::vector<C> out(static_cast<size_t>(result.element_count()));
      if constexpr (kIsFloat<C>) {
        FastConvolution(a.data(), b.data(), out.data());
        return out;
      }
      std::vector<int64_t> o(od.size(), 0);
      std::vector<const std::vector<std::pair<int64_t, int64_t>>*> lists(spatial);
      std::vector<int64_t> sizes(spatial), k(spatial);
      for (size_t oi = 0; oi < out.size(); ++oi, NextIndex(o, od)) {
        C acc = C(0);
        int64_t oz = o[dn.output_feature_dimension];
        int64_t feature_group = oz / out_group;
        int64_t batch_group = oz / depthwise_multiplier;
        bool any = true;
        for (size_t s = 0; s < spatial; ++s) {
          lists[s] = &taps[s][static_cast<size_t>(o[dn.output_spatial_dimensions[s]])];
          sizes[s] = static_cast<int64_t>(lists[s]->size());
          if (sizes[s] == 0) any = false;
        }
        if (any) {
          int64_t l_fixed = o[dn.output_batch_dimension] * ls[dn.input_batch_dimension] +
                            batch_group * batch_group_size * ls[dn.input_batch_dimension];
          int64_t r_fixed = oz * rs[dn.kernel_output_feature_dimension];
          std::fill(k.begin(), k.end(), 0);
          // Window positions in row-major order, then input features: XLA's accumulation order.
          do {
            int64_t l_base = l_fixed, r_base = r_fixed;
            for (size_t s = 0; s < spatial; ++s) {
              const auto& [x, w] = (*lists[s])[static_cast<size_t>(k[s])];
              int64_t kw = window.dimensions[s].window_reversal ? window_dims[s] - 1 - w : w;
              l_base += x * ls[dn.input_spatial_dimensions[s]];
              r_base += kw * rs[dn.kernel_spatial_dimensions[s]];
            }
            for (int64_t iz = 0; iz < in_group; ++iz) {
              int64_t z = feature_group * in_group + iz;
              Accumulate<C>(acc, a[l_base + z * ls[dn.input_feature_dimension]],
                            b[r_base + iz * rs[dn.kernel_input_feature_dimension]]);
            }
          } while (NextIndex(k, sizes));
        }
        out[oi] = acc;
      }
      return out;
    };
    tpu_status = ComputeInto<C>(result, inst, tpu_numerics, std::move(a), std::move(b), run);
  });
  if (!tpu_status.ok()) return tpu_status;
  return result;
}

// ragged-dot: lhs_ragged_dims names one lhs dimension split into groups by group_sizes (the last dimension of the
// group_sizes operand counts groups; leading ones, if any, follow the batch dimensions).
//  - ragged non-contracting dim: lhs rows of group g multiply rhs slice g of rhs_group_dims; rows past the last
//    group are zero.
//  - ragged contracting dim: one result per group (a leading result dimension), contracting only that group's span.
//  - ragged batch dim: an ordinary dot.
absl::StatusOr<Literal> EvalRaggedDot(const Instruction& inst, Operands operands) {
  if (operands.size() != 3) return Error(inst, "ragged-dot takes three operands");
  PrimitiveType type = inst.shape().element_type;
  absl::StatusOr<Literal> lhs = ToType(*operands[0], type);
  absl::StatusOr<Literal> rhs = ToType(*operands[1], type);
  if (!lhs.ok()) return lhs.status();
  if (!rhs.ok()) return rhs.status();
  const Literal& sizes = *operands[2];
  const std::vector<int64_t>& ld = lhs->shape().dimensions;
  const std::vector<int64_t>& rd = rhs->shape().dimensions;
  const std::vector<int64_t>& lb = IntList(inst, "lhs_batch_dims");
  const std::vector<int64_t>& rb = IntList(inst, "rhs_batch_dims");
  const std::vector<int64_t>& lc = IntList(inst, "lhs_contracting_dims");
  const std::vector<int64_t>& rc = IntList(inst, "rhs_contracting_dims");
  const std::vector<int64_t>& ragged_dims = IntList(inst, "lhs_ragged_dims");
  const std::vector<int64_t>& group_dims = IntList(inst, "rhs_group_dims");
  if (ragged_dims.size() != 1) return Error(inst, "expected one lhs_ragged_dims entry");
  int64_t ragged = ragged_dims[0];
  bool contracting = Contains(lc, ragged);
  if (Contains(lb, ragged)) return EvalDot(inst, operands.subspan(0, 2), /*tpu_numerics=*/false, /*threads=*/1);
  std::vector<int64_t> lf, rf;
  for (int64_t d = 0; d < static_cast<int64_t>(ld.size()); ++d) {
    if (!Contains(lb, d) && !Contains(lc, d)) lf.push_back(d);
  }
  for (int64_t d = 0; d < static_cast<int64_t>(rd.size()); ++d) {
    if (!Contains(rb, d) && !Contains(rc, d) && !Contains(group_dims, d)) rf.push_back(d);
  }
  int64_t batch = Product(ld, lb), m = Product(ld, lf), n = Product(rd, rf), k = Product(ld, lc);
  int64_t groups = sizes.shape().dimensions.empty() ? 1 : sizes.shape().dimensions.back();
  bool per_batch_sizes = sizes.shape().dimensions.size() > 1;
  // The ragged coordinate of a flattened index over `dims_list`: (index / stride) % size.
  auto coordinate_of = [&](const std::vector<int64_t>& list) {
    int64_t stride = 1;
    size_t pos = std::find(list.begin(), list.end(), ragged) - list.begin();
    for (size_t q = pos + 1; q < list.size(); ++q) stride *= ld[static_cast<size_t>(list[q])];
    return std::pair<int64_t, int64_t>{stride, ld[static_cast<size_t>(ragged)]};
  };
  auto group_bounds = [&](int64_t b) {
    std::vector<int64_t> bounds(static_cast<size_t>(groups) + 1, 0);
    for (int64_t g = 0; g < groups; ++g) {
      bounds[g + 1] = bounds[g] + std::max<int64_t>(IndexValue(sizes, (per_batch_sizes ? b * groups : 0) + g), 0);
    }
    return bounds;
  };
  Literal result(inst.shape());
  absl::Status status = absl::OkStatus();
  DispatchKind(KindOf(type), [&](auto tag) {
    using C = decltype(tag);
    std::vector<C> a = LoadCanonical<C>(*lhs, ld, {lb, lf, lc});
    std::vector<C> out(static_cast<size_t>(result.element_count()), C(0));
    if (!contracting) {
      if (group_dims.size() != 1) {
        status = Error(inst, "expected one rhs_group_dims entry");
        return;
      }
      std::vector<C> bm = LoadCanonical<C>(*rhs, rd, {rb, group_dims, rf, rc});
      auto [stride, size] = coordinate_of(lf);
      for (int64_t g = 0; g < batch; ++g) {
        std::vector<int64_t> bounds = group_bounds(g);
        for (int64_t i = 0; i < m; ++i) {
          int64_t row = (i / stride) % size;
          int64_t grp = std::upper_bound(bounds.begin() + 1, bounds.end(), row) - (bounds.begin() + 1);
          if (grp >= groups) continue;  // past the last group: zeros
          for (int64_t j = 0; j < n; ++j) {
            C acc = C(0);
            for (int64_t kk = 0; kk < k; ++kk) {
              Accumulate<C>(acc, a[(g * m + i) * k + kk], bm[((g * groups + grp) * n + j) * k + kk]);
            }
            out[(g * m + i) * n + j] = acc;
          }
        }
      }
    } else {
      std::vector<C> bm = LoadCanonical<C>(*rhs, rd, {rb, rf, rc});
      auto [stride, size] = coordinate_of(lc);
      for (int64_t grp = 0; grp < groups; ++grp) {
        for (int64_t g = 0; g < batch; ++g) {
          std::vector<int64_t> bounds = group_bounds(g);
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              C acc = C(0);
              for (int64_t kk = 0; kk < k; ++kk) {
                int64_t c = (kk / stride) % size;
                if (c < bounds[grp] || c >= bounds[grp + 1]) continue;
                Accumulate<C>(acc, a[(g * m + i) * k + kk], bm[(g * n + j) * k + kk]);
              }
              out[((grp * batch + g) * m + i) * n + j] = acc;
            }
          }
        }
      }
    }
    StoreAll<C>(result, out);
  });
  XLAC_RETURN_IF_ERROR(status);
  return result;
}

}  // namespace xlac::interp
