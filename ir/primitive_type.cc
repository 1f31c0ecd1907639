#include "ir/primitive_type.h"

#include <array>

namespace xlac {
namespace {

enum class Kind : uint8_t { P, S, U, F, C, T, K, O, N };

struct TypeInfo {
  std::string_view name;
  int bits;
  Kind kind;
};

constexpr std::array kTypes = {
#define XLAC_INFO(e, n, w, k) TypeInfo{n, w, Kind::k},
    XLAC_PRIMITIVE_TYPES(XLAC_INFO)
#undef XLAC_INFO
};

const TypeInfo& Info(PrimitiveType type) { return kTypes[static_cast<size_t>(type)]; }

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType type) { return Info(type).name; }

std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name) {
  for (size_t i = 1; i < kTypes.size(); ++i) {  // skip kInvalid
    if (kTypes[i].name == name && kTypes[i].kind != Kind::T) return static_cast<PrimitiveType>(i);
  }
  return std::nullopt;
}

int BitWidth(PrimitiveType type) { return Info(type).bits; }

int64_t ByteWidth(PrimitiveType type) {
  int bits = BitWidth(type);
  if (bits == 0) return 0;
  return bits < 8 ? 1 : bits / 8;
}

bool IsArrayType(PrimitiveType type) {
  Kind k = Info(type).kind;
  return k == Kind::P || k == Kind::S || k == Kind::U || k == Kind::F || k == Kind::C;
}
bool IsIntegralType(PrimitiveType type) { return IsSignedIntegralType(type) || IsUnsignedIntegralType(type); }
bool IsSignedIntegralType(PrimitiveType type) { return Info(type).kind == Kind::S; }
bool IsUnsignedIntegralType(PrimitiveType type) { return Info(type).kind == Kind::U; }
bool IsFloatingPointType(PrimitiveType type) { return Info(type).kind == Kind::F; }
bool IsComplexType(PrimitiveType type) { return Info(type).kind == Kind::C; }
bool IsPredType(PrimitiveType type) { return type == PrimitiveType::kPred; }

PrimitiveType ComplexComponentType(PrimitiveType type) {
  if (type == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (type == PrimitiveType::kC128) return PrimitiveType::kF64;
  return type;
}

FloatFormat GetFloatFormat(PrimitiveType type) {
  FloatFormat f;
  auto set = [&](int e, int m, int bias) {
    f.exponent_bits = e;
    f.mantissa_bits = m;
    f.exponent_bias = bias;
  };
  switch (type) {
    case PrimitiveType::kF16: set(5, 10, 15); break;
    case PrimitiveType::kBF16: set(8, 7, 127); break;
    case PrimitiveType::kF32: set(8, 23, 127); break;
    case PrimitiveType::kF64: set(11, 52, 1023); break;
    case PrimitiveType::kF8E5M2: set(5, 2, 15); break;
    case PrimitiveType::kF8E4M3: set(4, 3, 7); break;
    case PrimitiveType::kF8E3M4: set(3, 4, 3); break;
    case PrimitiveType::kF8E4M3FN:
      set(4, 3, 7);
      f.has_infinity = false;
      f.nan_is_all_ones_only = true;
      break;
    case PrimitiveType::kF8E4M3FNUZ:
      set(4, 3, 8);
      f.has_infinity = false;
      f.has_negative_zero = false;
      break;
    case PrimitiveType::kF8E4M3B11FNUZ:
      set(4, 3, 11);
      f.has_infinity = false;
      f.has_negative_zero = false;
      break;
    case PrimitiveType::kF8E5M2FNUZ:
      set(5, 2, 16);
      f.has_infinity = false;
      f.has_negative_zero = false;
      break;
    case PrimitiveType::kF8E8M0FNU:
      set(8, 0, 127);
      f.has_infinity = false;
      f.has_negative_zero = false;
      f.nan_is_all_ones_only = true;
      f.is_unsigned = true;
      break;
    case PrimitiveType::kF6E2M3FN:
      set(2, 3, 1);
      f.has_infinity = false;
      f.has_nan = false;
      break;
    case PrimitiveType::kF6E3M2FN:
      set(3, 2, 3);
      f.has_infinity = false;
      f.has_nan = false;
      break;
    case PrimitiveType::kF4E2M1FN:
      set(2, 1, 1);
      f.has_infinity = false;
      f.has_nan = false;
      break;
    default:
      break;
  }
  return f;
}

}  // namespace xlac
