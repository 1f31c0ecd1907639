// Scalar kernels of the elementwise ops, following XLA's HloEvaluator (see kernels.h).
#include "runtime/interpreter/kernels.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/cpu/xlac_runtime_complex.h"

namespace xlac::interp {
namespace {

// Complex kernels that are not exact componentwise operations come from the runtime library, which compiled code
// calls too: one implementation, so both backends agree bit for bit.
using RtBinary32 = void (*)(const float*, const float*, float*);
using RtBinary64 = void (*)(const double*, const double*, double*);
using RtUnary32 = void (*)(const float*, float*);
using RtUnary64 = void (*)(const double*, double*);
inline c64 CallRt(RtBinary32 f, RtBinary64, c64 a, c64 b) {
  c64 r;
  f(reinterpret_cast<const float*>(&a), reinterpret_cast<const float*>(&b), reinterpret_cast<float*>(&r));
  return r;
}
inline c128 CallRt(RtBinary32, RtBinary64 f, c128 a, c128 b) {
  c128 r;
  f(reinterpret_cast<const double*>(&a), reinterpret_cast<const double*>(&b), reinterpret_cast<double*>(&r));
  return r;
}
inline c64 CallRt(RtUnary32 f, RtUnary64, c64 a) {
  c64 r;
  f(reinterpret_cast<const float*>(&a), reinterpret_cast<float*>(&r));
  return r;
}
inline c128 CallRt(RtUnary32, RtUnary64 f, c128 a) {
  c128 r;
  f(reinterpret_cast<const double*>(&a), reinterpret_cast<double*>(&r));
  return r;
}
#define XLAC_RT(name, ...) CallRt(&xlac_rt_c64_##name, &xlac_rt_c128_##name, __VA_ARGS__)

template <typename C>
using U = std::make_unsigned_t<C>;

int Bits(PrimitiveType t) { return BitWidth(t); }

// The low `bits` bits of v.
inline uint64_t LowBits(uint64_t v, int bits) { return bits >= 64 ? v : v & ((uint64_t{1} << bits) - 1); }
inline int64_t SignExtend(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  int shift = 64 - bits;
  return static_cast<int64_t>(v << shift) >> shift;
}

// ---- binary ----

template <typename C>
C Add(C a, C b, PrimitiveType) {
  if constexpr (std::is_same_v<C, bool>)
    return a || b;
  else if constexpr (std::is_same_v<C, int64_t>)
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else
    return a + b;
}
template <typename C>
C Sub(C a, C b, PrimitiveType) {
  if constexpr (std::is_same_v<C, bool>)
    return a != b;
  else if constexpr (std::is_same_v<C, int64_t>)
    return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  else
    return a - b;
}
template <typename C>
C Mul(C a, C b, PrimitiveType) {
  if constexpr (std::is_same_v<C, bool>)
    return a && b;
  else if constexpr (std::is_same_v<C, int64_t>)
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else if constexpr (kIsComplex<C>)
    return XLAC_RT(mul, a, b);
  else
    return a * b;
}
template <typename C>
C Div(C a, C b, PrimitiveType) {
  if constexpr (std::is_same_v<C, bool>) {
    return b ? a : true;  // unsigned semantics: x/0 is all ones
  } else if constexpr (std::is_same_v<C, uint64_t>) {
    return b == 0 ? ~uint64_t{0} : a / b;
  } else if constexpr (std::is_same_v<C, int64_t>) {
    if (b == 0) return -1;
    if (b == -1) return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(a));  // INT_MIN/-1 = INT_MIN
    return a / b;
  } else if constexpr (kIsComplex<C>) {
    return XLAC_RT(div, a, b);
  } else {
    return a / b;
  }
}
template <typename C>
C Rem(C a, C b, PrimitiveType) {
  if constexpr (std::is_same_v<C, bool>) {
    return b ? false : a;
  } else if constexpr (kIsInt<C>) {
    if (b == 0) return a;
    if constexpr (std::is_same_v<C, int64_t>) {
      if (b == -1) return 0;
    }
    return a % b;
  } else {
    return std::fmod(a, b);
  }
}
// Complex values order lexicographically by (real, imag), as StableHLO defines max/min for them.
template <typename C>
bool Less(C a, C b) {
  if constexpr (kIsComplex<C>)
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  else
    return a < b;
}
template <typename C>
bool IsNan(C a) {
  if constexpr (kIsComplex<C>)
    return std::isnan(a.real()) || std::isnan(a.imag());
  else if constexpr (kIsFloat<C>)
    return std::isnan(a);
  else
    return false;
}
template <typename C>
C Max(C a, C b, PrimitiveType) {
  if (IsNan(a)) return a;
  if (IsNan(b)) return b;
  return Less(a, b) ? b : a;  // std::max
}
template <typename C>
C Min(C a, C b, PrimitiveType) {
  if (IsNan(a)) return a;
  if (IsNan(b)) return b;
  return Less(b, a) ? b : a;  // std::min
}

uint64_t IPow(uint64_t base, uint64_t exponent) {
  uint64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result *= base;
    base *= base;
    exponent >>= 1;
  }
  return result;
}

template <typename C>
C Pow(C a, C b, PrimitiveType) {
  if constexpr (std::is_same_v<C, bool>) {
    return a || !b;
  } else if constexpr (kIsComplex<C>) {
    return XLAC_RT(pow, a, b);
  } else {
    // 1^x = 1 and x^0 = 1 regardless of x (Kahan, "Much Ado About Nothing's Sign Bit").
    if (a == C(1) || b == C(0)) return C(1);
    if constexpr (std::is_same_v<C, int64_t>) {
      if (b < 0) return 0;  // a == 1 was handled above
      return static_cast<int64_t>(IPow(static_cast<uint64_t>(a), static_cast<uint64_t>(b)));
    } else if constexpr (std::is_same_v<C, uint64_t>) {
      return IPow(a, b);
    } else {
      return std::pow(a, b);
    }
  }
}
template <typename C>
C Atan2(C y, C x, PrimitiveType) {
  if constexpr (kIsFloat<C>) {
    return std::atan2(y, x);
  } else {
    return XLAC_RT(atan2, y, x);
  }
}
template <typename C>
C And(C a, C b, PrimitiveType) {
  if constexpr (std::is_same_v<C, bool>)
    return a && b;
  else
    return a & b;
}
template <typename C>
C Or(C a, C b, PrimitiveType) {
  if constexpr (std::is_same_v<C, bool>)
    return a || b;
  else
    return a | b;
}
template <typename C>
C Xor(C a, C b, PrimitiveType) {
  if constexpr (std::is_same_v<C, bool>)
    return a != b;
  else
    return a ^ b;
}
// Shift amounts are read as unsigned values of the element width; amounts >= width are out of range.
template <typename C>
C ShiftLeft(C a, C b, PrimitiveType t) {
  uint64_t amount = LowBits(static_cast<uint64_t>(b), Bits(t));
  if (amount >= static_cast<uint64_t>(Bits(t))) return 0;
  return static_cast<C>(static_cast<uint64_t>(a) << amount);
}
template <typename C>
C ShiftRightArithmetic(C a, C b, PrimitiveType t) {
  int64_t value = SignExtend(static_cast<uint64_t>(a), Bits(t));
  uint64_t amount = LowBits(static_cast<uint64_t>(b), Bits(t));
  if (amount >= static_cast<uint64_t>(Bits(t))) return static_cast<C>(value < 0 ? -1 : 0);
  return static_cast<C>(value >> amount);
}
template <typename C>
C ShiftRightLogical(C a, C b, PrimitiveType t) {
  uint64_t value = LowBits(static_cast<uint64_t>(a), Bits(t));
  uint64_t amount = LowBits(static_cast<uint64_t>(b), Bits(t));
  if (amount >= static_cast<uint64_t>(Bits(t))) return 0;
  return static_cast<C>(value >> amount);
}
template <typename C>
C MulHi(C a, C b, PrimitiveType t) {
  int bits = Bits(t);
  if constexpr (std::is_same_v<C, int64_t>) {
    __int128 p = static_cast<__int128>(a) * static_cast<__int128>(b);
    return static_cast<int64_t>(p >> bits);
  } else {
    unsigned __int128 p = static_cast<unsigned __int128>(a) * static_cast<unsigned __int128>(b);
    return static_cast<uint64_t>(p >> bits);
  }
}

// ---- unary ----

template <typename C>
C Abs(C a, PrimitiveType) {
  if constexpr (std::is_same_v<C, int64_t>)
    return a < 0 ? static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(a)) : a;
  else if constexpr (kIsFloat<C>)
    return std::fabs(a);
  else
    return a;  // unsigned, pred
}
template <typename C>
C Negate(C a, PrimitiveType) {
  if constexpr (std::is_same_v<C, bool>)
    return a;
  else if constexpr (kIsInt<C>)
    return static_cast<C>(uint64_t{0} - static_cast<uint64_t>(a));
  else
    return -a;
}
template <typename C>
C Not(C a, PrimitiveType) {
  if constexpr (std::is_same_v<C, bool>)
    return !a;
  else
    return ~a;
}
template <typename C>
C Sign(C a, PrimitiveType) {
  if constexpr (kIsInt<C>) {
    return static_cast<C>((C(0) < a) - (a < C(0)));
  } else if constexpr (kIsFloat<C>) {
    return std::isnan(a) ? a : std::copysign(static_cast<C>(a != C(0)), a);
  } else if constexpr (kIsComplex<C>) {
    return XLAC_RT(sign, a);
  } else {
    return a;
  }
}
template <typename C>
C Clz(C a, PrimitiveType t) {
  int bits = Bits(t);
  uint64_t v = LowBits(static_cast<uint64_t>(a), bits);
  return static_cast<C>(v == 0 ? bits : std::countl_zero(v) - (64 - bits));
}
template <typename C>
C Popcnt(C a, PrimitiveType t) {
  return static_cast<C>(std::popcount(LowBits(static_cast<uint64_t>(a), Bits(t))));
}
// Rounding ops are the identity on integers.
template <typename C>
C Floor(C a, PrimitiveType) {
  if constexpr (kIsFloat<C>)
    return std::floor(a);
  else
    return a;
}
template <typename C>
C Ceil(C a, PrimitiveType) {
  if constexpr (kIsFloat<C>)
    return std::ceil(a);
  else
    return a;
}
template <typename C>
C RoundAfz(C a, PrimitiveType) {
  if constexpr (kIsFloat<C>)
    return std::round(a);
  else
    return a;
}
template <typename C>
C RoundEven(C a, PrimitiveType) {
  if constexpr (kIsFloat<C>)
    return std::nearbyint(a);
  else
    return a;
}

#define XLAC_FLOAT_UNARY(Name, expr) \
  template <typename C>              \
  C Name(C x, PrimitiveType) {       \
    return expr;                     \
  }
// Real and complex; the complex kernel is the runtime's xlac_rt_c*_<rt>.
#define XLAC_UNARY(Name, expr, rt) \
  template <typename C>            \
  C Name(C x, PrimitiveType) {     \
    if constexpr (kIsComplex<C>)   \
      return XLAC_RT(rt, x);       \
    else                           \
      return expr;                 \
  }
XLAC_UNARY(Exp, std::exp(x), exp)
XLAC_UNARY(Log, std::log(x), log)
XLAC_UNARY(Sqrt, std::sqrt(x), sqrt)
XLAC_UNARY(Rsqrt, C(1) / std::sqrt(x), rsqrt)
XLAC_UNARY(Tanh, std::tanh(x), tanh)
XLAC_UNARY(Sin, std::sin(x), sin)
XLAC_UNARY(Cos, std::cos(x), cos)
XLAC_UNARY(Tan, std::tan(x), tan)
XLAC_UNARY(Logistic, C(1) / (C(1) + std::exp(-x)), logistic)
XLAC_UNARY(Sinh, std::sinh(x), sinh)
XLAC_UNARY(Cosh, std::cosh(x), cosh)
XLAC_UNARY(Asin, std::asin(x), asin)
XLAC_UNARY(Acos, std::acos(x), acos)
XLAC_UNARY(Atan, std::atan(x), atan)
XLAC_UNARY(Asinh, std::asinh(x), asinh)
XLAC_UNARY(Acosh, std::acosh(x), acosh)
XLAC_UNARY(Atanh, std::atanh(x), atanh)
XLAC_UNARY(Cbrt, std::cbrt(x), cbrt)
XLAC_UNARY(Expm1, std::expm1(x), expm1)
XLAC_UNARY(Log1p, std::log1p(x), log1p)
XLAC_FLOAT_UNARY(Erf, std::erf(x))
#undef XLAC_UNARY
#undef XLAC_FLOAT_UNARY

// ---- compare ----

template <typename C>
auto TotalOrderKey(C v) {
  if constexpr (std::is_same_v<C, float>) {
    int32_t i;
    std::memcpy(&i, &v, sizeof(i));
    return i ^ ((i >> 31) & 0x7fffffff);
  } else {
    int64_t i;
    std::memcpy(&i, &v, sizeof(i));
    return i ^ ((i >> 63) & 0x7fffffffffffffffll);
  }
}

template <typename C, CompareDirection D>
bool Cmp(C a, C b) {
  if constexpr (D == CompareDirection::kEq) return a == b;
  if constexpr (D == CompareDirection::kNe) return a != b;
  if constexpr (!kIsComplex<C>) {
    if constexpr (D == CompareDirection::kLt) return a < b;
    if constexpr (D == CompareDirection::kGt) return a > b;
    if constexpr (D == CompareDirection::kLe) return a <= b;
    if constexpr (D == CompareDirection::kGe) return a >= b;
  }
  return false;
}
template <typename C, CompareDirection D>
bool CmpTotal(C a, C b) {
  return Cmp<decltype(TotalOrderKey(a)), D>(TotalOrderKey(a), TotalOrderKey(b));
}

}  // namespace

std::optional<CompareDirection> ParseDirection(std::string_view text) {
  if (text == "EQ") return CompareDirection::kEq;
  if (text == "NE") return CompareDirection::kNe;
  if (text == "LT") return CompareDirection::kLt;
  if (text == "GT") return CompareDirection::kGt;
  if (text == "LE") return CompareDirection::kLe;
  if (text == "GE") return CompareDirection::kGe;
  return std::nullopt;
}

template <typename C>
CompareFn<C> GetCompareFn(CompareDirection d, bool total_order) {
  if constexpr (kIsFloat<C>) {
    if (total_order) {
      switch (d) {
        case CompareDirection::kEq:
          return &CmpTotal<C, CompareDirection::kEq>;
        case CompareDirection::kNe:
          return &CmpTotal<C, CompareDirection::kNe>;
        case CompareDirection::kLt:
          return &CmpTotal<C, CompareDirection::kLt>;
        case CompareDirection::kGt:
          return &CmpTotal<C, CompareDirection::kGt>;
        case CompareDirection::kLe:
          return &CmpTotal<C, CompareDirection::kLe>;
        case CompareDirection::kGe:
          return &CmpTotal<C, CompareDirection::kGe>;
      }
    }
  }
  if constexpr (kIsComplex<C>) {
    if (d != CompareDirection::kEq && d != CompareDirection::kNe) return nullptr;
  }
  switch (d) {
    case CompareDirection::kEq:
      return &Cmp<C, CompareDirection::kEq>;
    case CompareDirection::kNe:
      return &Cmp<C, CompareDirection::kNe>;
    case CompareDirection::kLt:
      return &Cmp<C, CompareDirection::kLt>;
    case CompareDirection::kGt:
      return &Cmp<C, CompareDirection::kGt>;
    case CompareDirection::kLe:
      return &Cmp<C, CompareDirection::kLe>;
    case CompareDirection::kGe:
      return &Cmp<C, CompareDirection::kGe>;
  }
  return nullptr;
}

template <typename C>
BinaryFn<C> GetBinaryFn(Opcode op) {
  constexpr bool kInt = kIsInt<C>;
  constexpr bool kBool = std::is_same_v<C, bool>;
  constexpr bool kCplx = kIsComplex<C>;
  switch (op) {
    case Opcode::kAdd:
      return &Add<C>;
    case Opcode::kSubtract:
      return &Sub<C>;
    case Opcode::kMultiply:
      return &Mul<C>;
    case Opcode::kDivide:
      return &Div<C>;
    case Opcode::kPower:
      return &Pow<C>;
    case Opcode::kRemainder:
      if constexpr (!kCplx) return &Rem<C>;
      break;
    case Opcode::kMaximum:
      return &Max<C>;
    case Opcode::kMinimum:
      return &Min<C>;
    case Opcode::kAtan2:
      if constexpr (!kInt && !kBool) return &Atan2<C>;
      break;
    case Opcode::kAnd:
      if constexpr (kInt || kBool) return &And<C>;
      break;
    case Opcode::kOr:
      if constexpr (kInt || kBool) return &Or<C>;
      break;
    case Opcode::kXor:
      if constexpr (kInt || kBool) return &Xor<C>;
      break;
    case Opcode::kShiftLeft:
      if constexpr (kInt) return &ShiftLeft<C>;
      break;
    case Opcode::kShiftRightArithmetic:
      if constexpr (kInt) return &ShiftRightArithmetic<C>;
      break;
    case Opcode::kShiftRightLogical:
      if constexpr (kInt) return &ShiftRightLogical<C>;
      break;
    case Opcode::kMulhi:
      if constexpr (kInt) return &MulHi<C>;
      break;
    default:
      break;
  }
  return nullptr;
}

template <typename C>
UnaryFn<C> GetUnaryFn(Opcode op) {
  constexpr bool kInt = kIsInt<C>;
  constexpr bool kBool = std::is_same_v<C, bool>;
  constexpr bool kCplx = kIsComplex<C>;
  constexpr bool kReal = kIsFloat<C>;
  switch (op) {
    case Opcode::kAbs:
      if constexpr (!kCplx) return &Abs<C>;
      break;
    case Opcode::kNegate:
      return &Negate<C>;
    case Opcode::kNot:
      if constexpr (kInt || kBool) return &Not<C>;
      break;
    case Opcode::kSign:
      if constexpr (!kBool) return &Sign<C>;
      break;
    case Opcode::kClz:
      if constexpr (kInt) return &Clz<C>;
      break;
    case Opcode::kPopulationCount:
      if constexpr (kInt) return &Popcnt<C>;
      break;
    case Opcode::kFloor:
      if constexpr (!kCplx && !kBool) return &Floor<C>;
      break;
    case Opcode::kCeil:
      if constexpr (!kCplx && !kBool) return &Ceil<C>;
      break;
    case Opcode::kRoundNearestAfz:
      if constexpr (!kCplx && !kBool) return &RoundAfz<C>;
      break;
    case Opcode::kRoundNearestEven:
      if constexpr (!kCplx && !kBool) return &RoundEven<C>;
      break;
    default:
      break;
  }
  if constexpr (kReal || kCplx) {
    switch (op) {
      case Opcode::kExp:
        return &Exp<C>;
      case Opcode::kLog:
        return &Log<C>;
      case Opcode::kSqrt:
        return &Sqrt<C>;
      case Opcode::kRsqrt:
        return &Rsqrt<C>;
      case Opcode::kTanh:
        return &Tanh<C>;
      case Opcode::kSin:
        return &Sin<C>;
      case Opcode::kCos:
        return &Cos<C>;
      case Opcode::kTan:
        return &Tan<C>;
      case Opcode::kLogistic:
        return &Logistic<C>;
      case Opcode::kSinh:
        return &Sinh<C>;
      case Opcode::kCosh:
        return &Cosh<C>;
      case Opcode::kAsin:
        return &Asin<C>;
      case Opcode::kAcos:
        return &Acos<C>;
      case Opcode::kAtan:
        return &Atan<C>;
      case Opcode::kAsinh:
        return &Asinh<C>;
      case Opcode::kAcosh:
        return &Acosh<C>;
      case Opcode::kAtanh:
        return &Atanh<C>;
      case Opcode::kCbrt:
        return &Cbrt<C>;
      case Opcode::kExpm1:
        return &Expm1<C>;
      case Opcode::kLog1p:
        return &Log1p<C>;
      default:
        break;
    }
  }
  if constexpr (kReal) {
    if (op == Opcode::kErf) return &Erf<C>;
  }
  return nullptr;
}

#define XLAC_INSTANTIATE(C)                    \
  template BinaryFn<C> GetBinaryFn<C>(Opcode); \
  template UnaryFn<C> GetUnaryFn<C>(Opcode);   \
  template CompareFn<C> GetCompareFn<C>(CompareDirection, bool);
XLAC_INSTANTIATE(bool)
XLAC_INSTANTIATE(int64_t)
XLAC_INSTANTIATE(uint64_t)
XLAC_INSTANTIATE(float)
XLAC_INSTANTIATE(double)
XLAC_INSTANTIATE(c64)
XLAC_INSTANTIATE(c128)
#undef XLAC_INSTANTIATE
#undef XLAC_RT

}  // namespace xlac::interp
