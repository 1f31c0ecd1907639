// Conversions between double and the bit patterns of every floating-point element type (f16, bf16, f8*, f6*, f4*).
#pragma once

#include <cstdint>

#include "ir/primitive_type.h"

namespace xlac {

// The value of `bits` (low BitWidth(type) bits) in floating type `type`, exactly, as a double.
double FloatBitsToDouble(PrimitiveType type, uint64_t bits);
// `value` rounded to nearest-even in `type`; overflow goes to inf (or NaN / max for types without inf, as
// ml_dtypes does: *fn types saturate to NaN, types without NaN to max finite). NaN maps to the type's default NaN.
uint64_t DoubleToFloatBits(PrimitiveType type, double value);
// True if `value` is finite but rounds to a value that is not finite in `type` (used to reject overflowing literals).
bool OverflowsFloatType(PrimitiveType type, double value);

}  // namespace xlac
