// Conversions between double and the bit patterns of every floating-point element type (f16, bf16, f8*, f6*, f4*).
#pragma once

#include <cstdint>
#include <optional>

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

namespace xlac {
// Bit pattern of a NaN with mantissa payload `payload` (nan(0x..) in HLO text) and the given sign; nullopt if the
// type has no NaN with that payload (payload does not fit the mantissa, is zero, or the type has a single NaN).
std::optional<uint64_t> NanWithPayload(PrimitiveType type, bool negative, uint64_t payload);
// The mantissa payload of a NaN bit pattern (what HLO text prints as nan(0x..)), and whether it is the type's
// default quiet-NaN payload (printed as plain `nan`).
uint64_t NanPayload(PrimitiveType type, uint64_t bits);
bool IsDefaultNanPayload(PrimitiveType type, uint64_t payload);
}  // namespace xlac
