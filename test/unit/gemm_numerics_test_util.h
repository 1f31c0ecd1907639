// The default numerics mode's error bound for GEMM-based ops (dot, tiled convolution), shared by their tests: each
// output element sums its k products in order with one fused multiply-add per step, so it is within
// gamma_k sum |a||b| of the exact sum (gamma_k = k u / (1 - k u), u the accumulation's unit roundoff), as is the
// interpreter's multiply-then-add sum; the two differ by at most twice that, plus the rounding of narrow results.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "codegen/target.h"
#include "codegen_test_util.h"
#include "fmt/format.h"

namespace xlac::codegen::testing {

// Whether the host (the JIT's default target) has AVX512_BF16: the default mode's bf16 GEMMs then run on vdpbf16ps
// (docs/numerics.md, "bf16 dots on AVX512_BF16").
inline bool HostHasAvx512Bf16() {
  absl::StatusOr<TargetInfo> target = ResolveTarget(TargetOptions{});
  return target.ok() && target->has_avx512_bf16;
}

// The unit roundoff of the accumulation (bf16/f16 dots accumulate in f32) and of the stored result.
inline double AccumulationRoundoff(PrimitiveType t) { return t == PrimitiveType::kF64 ? 0x1p-53 : 0x1p-24; }
inline double OutputRoundoff(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF64:
      return 0x1p-53;
    case PrimitiveType::kF32:
      return 0x1p-24;
    case PrimitiveType::kBF16:
      return 0x1p-8;
    case PrimitiveType::kF16:
      return 0x1p-11;
    default:
      return 0;
  }
}

// `x` with every floating-point element replaced by its magnitude (sign bit cleared).
inline Literal Magnitudes(const Literal& x) {
  Literal m = x;
  PrimitiveType t = x.shape().element_type;
  if (!IsFloatingPointType(t) || IsComplexType(t)) return m;
  const int64_t w = ByteWidth(t);
  for (int64_t i = 0; i < m.element_count(); ++i) m.mutable_raw_data()[i * w + w - 1] &= 0x7f;
  return m;
}

// The first element where the default-mode result `actual` leaves the bound around the interpreter's `expected`
// ("" if none). `magnitude` is the interpreter's result on the magnitudes of the arguments (sum |a||b| per element)
// and `k` bounds the number of products per element. NaNs must match NaNs and infinities must be equal.
inline std::string OutsideBound(const Literal& expected, const Literal& magnitude, const Literal& actual, int64_t k) {
  if (expected.is_tuple()) {
    for (size_t i = 0; i < expected.tuple_elements().size(); ++i) {
      std::string d =
          OutsideBound(expected.tuple_elements()[i], magnitude.tuple_elements()[i], actual.tuple_elements()[i], k);
      if (!d.empty()) return fmt::format("tuple element {}: {}", i, d);
    }
    return "";
  }
  PrimitiveType t = expected.shape().element_type;
  if (!IsFloatingPointType(t) || IsComplexType(t)) return DescribeDifference(expected, actual);
  const double u = AccumulationRoundoff(t), u_out = OutputRoundoff(t);
  const double gamma = k * u / (1 - k * u);
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    double e = expected.GetAsDouble(i), a = actual.GetAsDouble(i), s = magnitude.GetAsDouble(i);
    bool ok = std::isnan(e) || std::isnan(a)   ? std::isnan(e) && std::isnan(a)
              : std::isinf(e) || std::isinf(a) ? e == a
                                               : std::abs(a - e) <= 2 * gamma * s * (1 + 4 * u_out) +
                                                                        2 * u_out * std::max(std::abs(a), std::abs(e)) +
                                                                        k * std::numeric_limits<float>::denorm_min();
    if (!ok) return fmt::format("element {}: interpreter {}, default mode {}, sum |a||b| {}", i, e, a, s);
  }
  return "";
}

}  // namespace xlac::codegen::testing
