// convert, bitcast-convert, reduce-precision and stochastic-convert.
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/float_types.h"
#include "runtime/interpreter/kernels.h"

namespace xlac::interp {
namespace {

// XLA's float -> integer conversion: NaN -> 0, saturate to the destination range, then truncate toward zero.
template <typename D>
D FloatToInt(double v, PrimitiveType to) {
  if (std::isnan(v)) return 0;
  if constexpr (std::is_same_v<D, int64_t>) {
    int64_t lo = SignedMin(to), hi = SignedMax(to);
    if (v <= static_cast<double>(lo)) return lo;
    if (v >= static_cast<double>(hi)) return hi;
    return static_cast<int64_t>(v);
  } else {
    uint64_t hi = UnsignedMax(to);
    if (v <= 0) return 0;
    if (v >= static_cast<double>(hi)) return hi;
    return static_cast<uint64_t>(v);
  }
}

// A real value (already in compute type S) converted to compute type D of element type `to`.
template <typename D, typename S>
D ConvertReal(S v, PrimitiveType to) {
  if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (std::is_same_v<S, bool>) {
    return D(v ? 1 : 0);
  } else if constexpr (kIsInt<D>) {
    if constexpr (kIsFloat<S>)
      return FloatToInt<D>(static_cast<double>(v), to);
    else
      return static_cast<D>(v);
  } else if constexpr (std::is_same_v<D, float>) {
    if constexpr (std::is_same_v<S, double>) {
      // f64 -> bf16 goes through f32 (XLA's emitters and Eigen both do); every other narrow type rounds once,
      // as LLVM's fptrunc and ml_dtypes do.
      if (to == PrimitiveType::kF32 || to == PrimitiveType::kBF16) return static_cast<float>(v);
      return NarrowToFloat(to, DoubleToFloatBits(to, v));
    } else {
      return static_cast<float>(v);  // integers go through f32 (as Eigen/ml_dtypes do), then round on store
    }
  } else if constexpr (std::is_same_v<D, double>) {
    return static_cast<double>(v);
  } else {
    using R = typename D::value_type;
    if constexpr (std::is_same_v<S, bool>) return D(v ? 1 : 0);
    return D(static_cast<R>(v), 0);
  }
}

template <typename D, typename S>
D ConvertValue(S v, PrimitiveType to) {
  if constexpr (kIsComplex<S>) {
    if constexpr (kIsComplex<D>) {
      using R = typename D::value_type;
      return D(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    } else if constexpr (std::is_same_v<D, bool>) {
      return v != S(0);
    } else {
      return ConvertReal<D>(v.real(), to);  // complex -> real keeps the real part
    }
  } else {
    return ConvertReal<D>(v, to);
  }
}

// Raw storage bits of element i (low BitWidth bits).
uint64_t RawBits(const Literal& lit, int64_t i) {
  PrimitiveType t = lit.shape().element_type;
  int64_t w = ByteWidth(t);
  uint64_t v = 0;
  std::memcpy(&v, lit.raw_data() + i * w, static_cast<size_t>(w));
  int bits = BitWidth(t);
  return bits >= 64 ? v : v & ((uint64_t{1} << bits) - 1);
}

void SetRawBits(Literal& lit, int64_t i, uint64_t bits) {
  PrimitiveType t = lit.shape().element_type;
  int64_t w = ByteWidth(t);
  int width = BitWidth(t);
  if (t == PrimitiveType::kPred) {
    bits = bits != 0;
  } else if (IsSignedIntegralType(t) && width < 8) {
    int shift = 64 - width;
    bits = static_cast<uint64_t>(static_cast<int64_t>(bits << shift) >> shift);
  }
  std::memcpy(lit.mutable_raw_data() + i * w, &bits, static_cast<size_t>(w));
}

absl::StatusOr<Literal> BitcastConvert(const Instruction& inst, const Literal& x) {
  PrimitiveType from = x.shape().element_type, to = inst.shape().element_type;
  Literal result(inst.shape());
  int in_bits = BitWidth(from), out_bits = BitWidth(to);
  if (x.element_count() * in_bits != result.element_count() * out_bits) {
    return Error(inst, "bitcast-convert changes the total size ({} x {} bits -> {} x {} bits)", x.element_count(),
                 in_bits, result.element_count(), out_bits);
  }
  bool byte_sized = in_bits == ByteWidth(from) * 8 && out_bits == ByteWidth(to) * 8;
  if (byte_sized) {
    // Storage is little-endian and row-major, so narrower elements are the wider ones' bytes in order.
    CopyBytes(result.mutable_raw_data(), x.raw_data(), x.byte_size());
    if (to == PrimitiveType::kPred) {
      for (int64_t i = 0; i < result.element_count(); ++i) SetRawBits(result, i, RawBits(result, i));
    }
    return result;
  }
  if (in_bits > 64 || out_bits > 64) return Unsupported(inst, "sub-byte bitcast-convert wider than 64 bits");
  // Sub-byte types: element j of the narrow side occupies bits [j*w, (j+1)*w) of the wide side.
  int64_t out_i = 0;
  uint64_t acc = 0;
  int filled = 0;
  for (int64_t i = 0; i < x.element_count(); ++i) {
    uint64_t v = RawBits(x, i);
    int consumed = 0;
    while (consumed < in_bits) {
      int take = std::min(in_bits - consumed, out_bits - filled);
      uint64_t part = (v >> consumed) & (take >= 64 ? ~uint64_t{0} : ((uint64_t{1} << take) - 1));
      acc |= part << filled;
      filled += take;
      consumed += take;
      if (filled == out_bits) {
        SetRawBits(result, out_i++, acc);
        acc = 0;
        filled = 0;
      }
    }
  }
  return result;
}

// XLA's reduce-precision on the IEEE bits of a float or double (round to nearest even on the mantissa, flush
// exponent underflow to zero and overflow to infinity, keep NaNs NaN).
template <typename F, typename Uint>
F ReducePrecision(F value, int64_t exponent_bits, int64_t mantissa_bits) {
  constexpr int kSrcMantissa = std::numeric_limits<F>::digits - 1;
  constexpr int kSrcExponent = 8 * sizeof(F) - kSrcMantissa - 1;
  Uint bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if (mantissa_bits < kSrcMantissa) {
    Uint last_bit = Uint{1} << (kSrcMantissa - mantissa_bits);
    Uint base_bias = (last_bit >> 1) - 1;
    Uint x_last = (bits & last_bit) >> (kSrcMantissa - mantissa_bits);
    bits = (bits + x_last + base_bias) & ~(last_bit - 1);
  }
  if (exponent_bits < kSrcExponent) {
    Uint sign_mask = Uint{1} << (8 * sizeof(F) - 1);
    Uint exp_mask = ((Uint{1} << kSrcExponent) - 1) << kSrcMantissa;
    Uint bias = (Uint{1} << (kSrcExponent - 1)) - 1;
    Uint reduced_bias = (Uint{1} << (exponent_bits - 1)) - 1;
    Uint max_exp = bias + reduced_bias, min_exp = bias - reduced_bias;
    Uint x_exp = bits & exp_mask;
    bool overflows = x_exp > (max_exp << kSrcMantissa);
    bool underflows = x_exp <= (min_exp << kSrcMantissa);
    Uint signed_zero = bits & sign_mask;
    Uint signed_inf = signed_zero | exp_mask;
    if (overflows) bits = signed_inf;
    if (underflows) bits = signed_zero;
  }
  F result;
  std::memcpy(&result, &bits, sizeof(result));
  if (std::isnan(value)) result = mantissa_bits > 0 ? value : std::numeric_limits<F>::infinity();
  return result;
}

absl::StatusOr<Literal> EvalReducePrecision(const Instruction& inst, const Literal& x) {
  int64_t e = IntAttr(inst, "exponent_bits", -1), m = IntAttr(inst, "mantissa_bits", -1);
  if (e < 1 || m < 0) return Error(inst, "needs exponent_bits >= 1 and mantissa_bits >= 0");
  Literal result(inst.shape());
  NumKind kind = KindOf(x.shape().element_type);
  if (kind == NumKind::kFloat) {
    std::vector<float> v = LoadAll<float>(x);
    for (float& f : v) f = ReducePrecision<float, uint32_t>(f, e, m);
    StoreAll<float>(result, v);
  } else if (kind == NumKind::kDouble) {
    std::vector<double> v = LoadAll<double>(x);
    for (double& f : v) f = ReducePrecision<double, uint64_t>(f, e, m);
    StoreAll<double>(result, v);
  } else {
    return Unsupported(inst, "reduce-precision needs a floating-point operand");
  }
  return result;
}

// XLA's stochastic rounding of floats to integers: round the magnitude up when the random bits, read as a fixed
// point fraction, are below the fractional part.
absl::StatusOr<Literal> EvalStochasticConvert(const Instruction& inst, const Literal& x, const Literal& random) {
  PrimitiveType to = inst.shape().element_type;
  NumKind in_kind = KindOf(x.shape().element_type);
  if ((in_kind != NumKind::kFloat && in_kind != NumKind::kDouble) || !IsIntegralType(to) ||
      !IsUnsignedIntegralType(random.shape().element_type)) {
    return Unsupported(inst, "stochastic-convert supports float -> integer with unsigned random bits");
  }
  Literal result(inst.shape());
  int rbits = BitWidth(random.shape().element_type);
  bool is_signed = IsSignedIntegralType(to);
  double lo = is_signed ? static_cast<double>(SignedMin(to)) : 0.0;
  double hi = is_signed ? static_cast<double>(SignedMax(to)) : static_cast<double>(UnsignedMax(to));
  int64_t min_bits = is_signed ? SignedMin(to) : 0;
  int64_t max_bits = is_signed ? SignedMax(to) : static_cast<int64_t>(UnsignedMax(to));
  for (int64_t i = 0; i < result.element_count(); ++i) {
    double v = in_kind == NumKind::kFloat ? LoadOne<float>(x, i) : LoadOne<double>(x, i);
    uint64_t r = LoadOne<uint64_t>(random, i);
    int64_t out;
    bool neg = std::signbit(v);
    if (std::isnan(v)) {
      out = 0;
    } else if ((std::isinf(v) && !neg) || v >= hi) {
      out = max_bits;
    } else if (std::isinf(v) || v <= lo) {
      out = min_bits;
    } else {
      double a = std::fabs(v);
      double truncated = std::trunc(a);
      double frac = a - truncated;
      if (frac != 0) {
        auto fixed = static_cast<uint64_t>(std::ldexp(frac, rbits));
        if (r < fixed && truncated < hi) truncated += 1;
      }
      out = static_cast<int64_t>(neg ? -truncated : truncated);
    }
    result.SetFromInt64(i, out);
  }
  return result;
}

}  // namespace

void ConvertComputeValue(PrimitiveType from, const void* src, PrimitiveType to, void* dst) {
  DispatchKind(KindOf(from), [&](auto src_tag) {
    using S = decltype(src_tag);
    S v;
    std::memcpy(&v, src, sizeof(S));
    DispatchKind(KindOf(to), [&](auto dst_tag) {
      using D = decltype(dst_tag);
      D r = Normalize<D>(ConvertValue<D>(v, to), to);
      std::memcpy(dst, &r, sizeof(D));
    });
  });
}

absl::StatusOr<Literal> ConvertLiteral(const Literal& lit, PrimitiveType to) {
  Shape shape = lit.shape();
  shape.element_type = to;
  if (lit.shape().element_type == to) return lit;
  // Element by element into the result (which gets every element): no whole-array vectors in the compute types
  // besides it (the f64 reference widens every bf16 weight: 2 + 4 + 8 bytes per element at once were 2.3x the
  // result).
  Literal result = Literal::CreateUninitialized(shape);
  int64_t n = lit.element_count();
  DispatchKind(KindOf(lit.shape().element_type), [&](auto src_tag) {
    using S = decltype(src_tag);
    DispatchKind(KindOf(to), [&](auto dst_tag) {
      using D = decltype(dst_tag);
      for (int64_t i = 0; i < n; ++i) StoreOne<D>(result, i, ConvertValue<D>(LoadOne<S>(lit, i), to));
    });
  });
  return result;
}

absl::StatusOr<Literal> EvalConvert(const Instruction& inst, Operands operands) {
  switch (inst.opcode()) {
    case Opcode::kConvert: {
      absl::StatusOr<Literal> r = ConvertLiteral(*operands[0], inst.shape().element_type);
      if (!r.ok()) return r.status();
      return r->ViewAs(inst.shape());  // the same bytes with the instruction's layout: no copy
    }
    case Opcode::kBitcastConvert:
      return BitcastConvert(inst, *operands[0]);
    case Opcode::kReducePrecision:
      return EvalReducePrecision(inst, *operands[0]);
    case Opcode::kStochasticConvert:
      return EvalStochasticConvert(inst, *operands[0], *operands[1]);
    default:
      return Unsupported(inst, "not a conversion");
  }
}

}  // namespace xlac::interp
