// Element types of HLO shapes, mirroring XLA's PrimitiveType.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace xlac {

// X(enumerator, hlo_name, bit_width, kind) in XLA's declaration order.
// kind: P=pred, S=signed int, U=unsigned int, F=float, C=complex, T=tuple, K=token, O=opaque, N=invalid.
#define XLAC_PRIMITIVE_TYPES(X)               \
  X(kInvalid, "invalid", 0, N)                \
  X(kPred, "pred", 8, P)                      \
  X(kS2, "s2", 2, S)                          \
  X(kS4, "s4", 4, S)                          \
  X(kS8, "s8", 8, S)                          \
  X(kS16, "s16", 16, S)                       \
  X(kS32, "s32", 32, S)                       \
  X(kS64, "s64", 64, S)                       \
  X(kU2, "u2", 2, U)                          \
  X(kU4, "u4", 4, U)                          \
  X(kU8, "u8", 8, U)                          \
  X(kU16, "u16", 16, U)                       \
  X(kU32, "u32", 32, U)                       \
  X(kU64, "u64", 64, U)                       \
  X(kF16, "f16", 16, F)                       \
  X(kBF16, "bf16", 16, F)                     \
  X(kF32, "f32", 32, F)                       \
  X(kF64, "f64", 64, F)                       \
  X(kF4E2M1FN, "f4e2m1fn", 4, F)              \
  X(kF6E2M3FN, "f6e2m3fn", 6, F)              \
  X(kF6E3M2FN, "f6e3m2fn", 6, F)              \
  X(kF8E3M4, "f8e3m4", 8, F)                  \
  X(kF8E4M3, "f8e4m3", 8, F)                  \
  X(kF8E4M3FN, "f8e4m3fn", 8, F)              \
  X(kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8, F)    \
  X(kF8E4M3FNUZ, "f8e4m3fnuz", 8, F)          \
  X(kF8E5M2, "f8e5m2", 8, F)                  \
  X(kF8E5M2FNUZ, "f8e5m2fnuz", 8, F)          \
  X(kF8E8M0FNU, "f8e8m0fnu", 8, F)            \
  X(kC64, "c64", 64, C)                       \
  X(kC128, "c128", 128, C)                    \
  X(kTuple, "tuple", 0, T)                    \
  X(kOpaque, "opaque", 0, O)                  \
  X(kToken, "token", 0, K)

enum class PrimitiveType : uint8_t {
#define XLAC_ENUM(e, n, w, k) e,
  XLAC_PRIMITIVE_TYPES(XLAC_ENUM)
#undef XLAC_ENUM
};

// The lowercase name XLA prints ("f32", "pred", "token", ...).
std::string_view PrimitiveTypeName(PrimitiveType type);
// Inverse of PrimitiveTypeName for the types that may appear in a shape; nullopt otherwise.
std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name);

// Bits of one element (complex: both halves). 0 for tuple/token/opaque.
int BitWidth(PrimitiveType type);
// Bytes one element occupies in a dense literal: sub-byte types use one byte each, as XLA's literals do.
int64_t ByteWidth(PrimitiveType type);

bool IsArrayType(PrimitiveType type);  // anything with elements: pred, ints, floats, complex
bool IsIntegralType(PrimitiveType type);
bool IsSignedIntegralType(PrimitiveType type);
bool IsUnsignedIntegralType(PrimitiveType type);
bool IsFloatingPointType(PrimitiveType type);
bool IsComplexType(PrimitiveType type);
bool IsPredType(PrimitiveType type);
// Component type of a complex type (c64 -> f32); identity otherwise.
PrimitiveType ComplexComponentType(PrimitiveType type);

// Floating-point format parameters, shared by the literal code and (later) codegen.
struct FloatFormat {
  int exponent_bits = 0;
  int mantissa_bits = 0;  // explicit mantissa bits
  int exponent_bias = 0;
  bool has_infinity = true;
  bool has_negative_zero = true;      // false for *fnuz: the -0 pattern is NaN
  bool nan_is_all_ones_only = false;  // *fn: only exponent and mantissa all ones is NaN
  bool has_nan = true;                // false for f4e2m1fn, f6*
  bool is_unsigned = false;           // f8e8m0fnu has no sign bit
};
// Only valid for floating-point types (incl. f16/bf16/f32/f64).
FloatFormat GetFloatFormat(PrimitiveType type);

}  // namespace xlac
