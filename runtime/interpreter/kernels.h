// Scalar kernels of the elementwise ops, per compute type (see internal.h). Shared by the array ops and by the fast
// path that applies single-op reducers and comparators without building literals.
#pragma once

#include <string_view>

#include "runtime/interpreter/internal.h"

namespace xlac::interp {

// The element type is passed for width-dependent ops (shifts, mulhi, clz, popcnt); results are narrowed when
// stored (or by Normalize).
template <typename C>
using BinaryFn = C (*)(C, C, PrimitiveType);
template <typename C>
using UnaryFn = C (*)(C, PrimitiveType);
template <typename C>
using CompareFn = bool (*)(C, C);

// nullptr when the op is not defined for compute type C.
template <typename C>
BinaryFn<C> GetBinaryFn(Opcode op);
template <typename C>
UnaryFn<C> GetUnaryFn(Opcode op);

enum class CompareDirection : uint8_t { kEq, kNe, kLt, kGt, kLe, kGe };
std::optional<CompareDirection> ParseDirection(std::string_view text);
// `total_order` selects the TOTALORDER comparison of floats (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN).
template <typename C>
CompareFn<C> GetCompareFn(CompareDirection direction, bool total_order);

// clamp(lo, x, hi) as XLA's evaluator computes it: a NaN bound or value propagates (lo, then x, then hi), otherwise
// std::min(hi, std::max(x, lo)).
template <typename C>
inline C ClampValue(C lo, C x, C hi) {
  if constexpr (kIsFloat<C>) {
    if (lo != lo) return lo;
    if (x != x) return x;
    if (hi != hi) return hi;
  }
  C m = (x < lo) ? lo : x;
  return (m < hi) ? m : hi;
}

// Converts one value held in the compute type of element type `from` (at `src`) to the compute type of `to` (at
// `dst`), with XLA's convert semantics.
void ConvertComputeValue(PrimitiveType from, const void* src, PrimitiveType to, void* dst);

}  // namespace xlac::interp
