#include "ir/float_types.h"

#include <cmath>
#include <cstring>

namespace xlac {
namespace {

struct Fields {
  int e, m, bias;
  uint64_t exp_mask, mant_mask, sign_bit;
};

Fields GetFields(const FloatFormat& f) {
  Fields r;
  r.e = f.exponent_bits;
  r.m = f.mantissa_bits;
  r.bias = f.exponent_bias;
  r.exp_mask = (uint64_t{1} << r.e) - 1;
  r.mant_mask = (uint64_t{1} << r.m) - 1;
  r.sign_bit = f.is_unsigned ? 0 : uint64_t{1} << (r.e + r.m);
  return r;
}

bool IsNanBits(const FloatFormat& f, const Fields& r, uint64_t bits) {
  if (!f.has_nan) return false;
  uint64_t exp = (bits >> r.m) & r.exp_mask;
  uint64_t mant = bits & r.mant_mask;
  if (f.has_infinity) return exp == r.exp_mask && mant != 0;
  if (f.nan_is_all_ones_only) return exp == r.exp_mask && mant == r.mant_mask;
  // fnuz: the negative-zero pattern is the only NaN.
  return bits == r.sign_bit;
}

// Largest finite magnitude's bit pattern (sign clear).
uint64_t MaxFiniteBits(const FloatFormat& f, const Fields& r) {
  if (f.has_infinity) return ((r.exp_mask - 1) << r.m) | r.mant_mask;
  if (f.nan_is_all_ones_only) {
    if (r.m == 0) return (r.exp_mask - 1) << r.m;  // e8m0: all-ones exponent is the NaN
    return (r.exp_mask << r.m) | (r.mant_mask - 1);
  }
  return (r.exp_mask << r.m) | r.mant_mask;
}

uint64_t DefaultNanBits(const FloatFormat& f, const Fields& r, bool negative) {
  if (f.has_infinity) {
    uint64_t quiet = r.m > 0 ? uint64_t{1} << (r.m - 1) : 0;
    return (negative ? r.sign_bit : 0) | (r.exp_mask << r.m) | quiet;
  }
  if (f.nan_is_all_ones_only) return (negative ? r.sign_bit : 0) | (r.exp_mask << r.m) | r.mant_mask;
  return r.sign_bit;  // fnuz
}

}  // namespace

double FloatBitsToDouble(PrimitiveType type, uint64_t bits) {
  if (type == PrimitiveType::kF64) {
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    return d;
  }
  if (type == PrimitiveType::kF32) {
    uint32_t b = static_cast<uint32_t>(bits);
    float v;
    std::memcpy(&v, &b, sizeof(v));
    return v;
  }
  FloatFormat f = GetFloatFormat(type);
  Fields r = GetFields(f);
  bool negative = (bits & r.sign_bit) != 0;
  if (IsNanBits(f, r, bits)) return negative ? -std::nan("") : std::nan("");
  uint64_t exp = (bits >> r.m) & r.exp_mask;
  uint64_t mant = bits & r.mant_mask;
  double value;
  if (f.has_infinity && exp == r.exp_mask) {
    value = INFINITY;
  } else if (f.is_unsigned && r.m == 0) {
    value = std::ldexp(1.0, static_cast<int>(exp) - r.bias);  // e8m0: pure exponent, no zero or subnormals
  } else if (exp == 0) {
    value = std::ldexp(static_cast<double>(mant), 1 - r.bias - r.m);
  } else {
    value = std::ldexp(static_cast<double>(mant | (uint64_t{1} << r.m)), static_cast<int>(exp) - r.bias - r.m);
  }
  return negative ? -value : value;
}

uint64_t DoubleToFloatBits(PrimitiveType type, double value) {
  if (type == PrimitiveType::kF64) {
    uint64_t b;
    std::memcpy(&b, &value, sizeof(b));
    return b;
  }
  if (type == PrimitiveType::kF32) {
    float v = static_cast<float>(value);
    uint32_t b;
    std::memcpy(&b, &v, sizeof(b));
    return b;
  }
  FloatFormat f = GetFloatFormat(type);
  Fields r = GetFields(f);
  bool negative = std::signbit(value);
  if (std::isnan(value)) return f.has_nan ? DefaultNanBits(f, r, negative) : MaxFiniteBits(f, r);
  if (f.is_unsigned && negative && value != 0) return DefaultNanBits(f, r, false);
  uint64_t sign = negative ? r.sign_bit : 0;
  double a = std::fabs(value);
  uint64_t overflow = f.has_infinity ? ((r.exp_mask << r.m) | sign)
                      : f.has_nan     ? DefaultNanBits(f, r, negative)
                                      : (MaxFiniteBits(f, r) | sign);
  if (std::isinf(a)) return overflow;
  if (a == 0) {
    if (f.is_unsigned) return 0;
    return f.has_negative_zero ? sign : 0;
  }
  int ex;
  std::frexp(a, &ex);
  int e = ex - 1;  // a = 1.x * 2^e
  uint64_t bits;
  if (f.is_unsigned && r.m == 0) {
    // e8m0: round to the nearest power of two (ties to the larger, as ml_dtypes does via RNE on the mantissa).
    double q = std::nearbyint(std::ldexp(a, -e));  // 1 or 2
    int exp = e + static_cast<int>(q) - 1 + r.bias;
    if (exp < 0) return 0;
    if (exp >= static_cast<int>(r.exp_mask)) return DefaultNanBits(f, r, false);
    return static_cast<uint64_t>(exp);
  }
  int emin = 1 - r.bias;
  if (e < emin) {
    double q = std::nearbyint(std::ldexp(a, r.m - emin));  // subnormal; q may round up to the min normal
    uint64_t mant = static_cast<uint64_t>(q);
    if (mant == 0 && !f.has_negative_zero) return 0;
    bits = mant;
  } else {
    double q = std::nearbyint(std::ldexp(a, r.m - e));
    uint64_t qi = static_cast<uint64_t>(q);
    if (qi == (uint64_t{1} << (r.m + 1))) {
      qi >>= 1;
      ++e;
    }
    int64_t exp = e + r.bias;
    if (exp > static_cast<int64_t>(r.exp_mask)) return overflow;
    bits = (static_cast<uint64_t>(exp) << r.m) | (qi & r.mant_mask);
    if (bits > MaxFiniteBits(f, r)) return overflow;
  }
  return bits | sign;
}

bool OverflowsFloatType(PrimitiveType type, double value) {
  if (!std::isfinite(value)) return false;
  if (type == PrimitiveType::kF64) return false;
  if (type == PrimitiveType::kF32) return std::isinf(static_cast<float>(value));
  FloatFormat f = GetFloatFormat(type);
  Fields r = GetFields(f);
  double max_finite = FloatBitsToDouble(type, MaxFiniteBits(f, r));
  uint64_t bits = DoubleToFloatBits(type, value);
  if (IsNanBits(f, r, bits)) return true;
  double back = FloatBitsToDouble(type, bits);
  if (std::isinf(back)) return true;
  // Types without inf/NaN saturate, so rounding cannot reveal overflow: compare magnitudes instead.
  return !f.has_nan && std::fabs(value) > max_finite;
}

std::optional<uint64_t> NanWithPayload(PrimitiveType type, bool negative, uint64_t payload) {
  if (type == PrimitiveType::kF64 || type == PrimitiveType::kF32) {
    int m = type == PrimitiveType::kF64 ? 52 : 23;
    int e = type == PrimitiveType::kF64 ? 11 : 8;
    if (payload == 0 || payload >= (uint64_t{1} << m)) return std::nullopt;
    uint64_t sign = negative ? uint64_t{1} << (e + m) : 0;
    return sign | (((uint64_t{1} << e) - 1) << m) | payload;
  }
  FloatFormat f = GetFloatFormat(type);
  if (!f.has_nan || !f.has_infinity) return std::nullopt;  // fn/fnuz types have a single NaN: no payloads
  Fields r = GetFields(f);
  if (payload == 0 || payload > r.mant_mask) return std::nullopt;
  return (negative ? r.sign_bit : 0) | (r.exp_mask << r.m) | payload;
}

uint64_t NanPayload(PrimitiveType type, uint64_t bits) {
  if (type == PrimitiveType::kF64) return bits & ((uint64_t{1} << 52) - 1);
  if (type == PrimitiveType::kF32) return bits & ((uint64_t{1} << 23) - 1);
  FloatFormat f = GetFloatFormat(type);
  return bits & GetFields(f).mant_mask;
}

bool IsDefaultNanPayload(PrimitiveType type, uint64_t payload) {
  int m = type == PrimitiveType::kF64   ? 52
          : type == PrimitiveType::kF32 ? 23
                                        : GetFloatFormat(type).mantissa_bits;
  FloatFormat f = type == PrimitiveType::kF64 || type == PrimitiveType::kF32 ? FloatFormat{} : GetFloatFormat(type);
  if (!f.has_infinity) return true;  // single-NaN types
  return m > 0 && payload == (uint64_t{1} << (m - 1));
}

}  // namespace xlac
