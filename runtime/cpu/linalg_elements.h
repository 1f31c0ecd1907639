// Element storage of the linear-algebra kernels (linalg.cc, decompositions.cc): each suffix of the C entry points
// loads to and stores from complex<double>. bf16 and f16 convert exactly like the interpreter's Literal
// (ir/float_types.cc): NaN loads as a sign-keeping quiet NaN, stores round straight from double to nearest even, NaN
// to the default quiet NaN with its sign. Internal to the runtime.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

namespace xlac_rt_linalg {

using cd = std::complex<double>;

// An IEEE-style binary format with infinities and NaNs (bf16: 8 exponent bits, 7 mantissa bits; f16: 5, 10).
struct Narrow {
  int e, m;
  int bias() const { return (1 << (e - 1)) - 1; }
  uint64_t exp_mask() const { return (uint64_t{1} << e) - 1; }
  uint64_t mant_mask() const { return (uint64_t{1} << m) - 1; }
  uint64_t sign_bit() const { return uint64_t{1} << (e + m); }
};
inline constexpr Narrow kBF16{8, 7};
inline constexpr Narrow kF16{5, 10};

inline double NarrowToDouble(const Narrow& f, uint64_t bits) {
  bool negative = (bits & f.sign_bit()) != 0;
  uint64_t exp = (bits >> f.m) & f.exp_mask();
  uint64_t mant = bits & f.mant_mask();
  if (exp == f.exp_mask() && mant != 0) return negative ? -std::nan("") : std::nan("");
  double value;
  if (exp == f.exp_mask()) {
    value = INFINITY;
  } else if (exp == 0) {
    value = std::ldexp(static_cast<double>(mant), 1 - f.bias() - f.m);
  } else {
    value = std::ldexp(static_cast<double>(mant | (uint64_t{1} << f.m)), static_cast<int>(exp) - f.bias() - f.m);
  }
  return negative ? -value : value;
}

inline uint64_t DoubleToNarrow(const Narrow& f, double value) {
  bool negative = std::signbit(value);
  uint64_t sign = negative ? f.sign_bit() : 0;
  if (std::isnan(value)) return sign | (f.exp_mask() << f.m) | (uint64_t{1} << (f.m - 1));
  double a = std::fabs(value);
  uint64_t overflow = (f.exp_mask() << f.m) | sign;
  if (std::isinf(a)) return overflow;
  if (a == 0) return sign;
  int ex;
  std::frexp(a, &ex);
  int e = ex - 1;  // a = 1.x * 2^e
  uint64_t bits;
  int emin = 1 - f.bias();
  if (e < emin) {
    double q = std::nearbyint(std::ldexp(a, f.m - emin));  // subnormal; q may round up to the min normal
    bits = static_cast<uint64_t>(q);
  } else {
    double q = std::nearbyint(std::ldexp(a, f.m - e));
    uint64_t qi = static_cast<uint64_t>(q);
    if (qi == (uint64_t{1} << (f.m + 1))) {
      qi >>= 1;
      ++e;
    }
    int64_t exp = e + f.bias();
    if (exp > static_cast<int64_t>(f.exp_mask())) return overflow;
    bits = (static_cast<uint64_t>(exp) << f.m) | (qi & f.mant_mask());
    if (bits > (((f.exp_mask() - 1) << f.m) | f.mant_mask())) return overflow;
  }
  return bits | sign;
}

// Element storage <-> complex<double>, one per suffix of the C entry points.
struct F32 {
  using Real = F32;
  static cd Load(const void* p, int64_t i) { return cd(static_cast<const float*>(p)[i], 0); }
  static void Store(void* p, int64_t i, cd v) { static_cast<float*>(p)[i] = static_cast<float>(v.real()); }
};
struct F64 {
  using Real = F64;
  static cd Load(const void* p, int64_t i) { return cd(static_cast<const double*>(p)[i], 0); }
  static void Store(void* p, int64_t i, cd v) { static_cast<double*>(p)[i] = v.real(); }
};
struct C64 {
  using Real = F32;
  static cd Load(const void* p, int64_t i) { return cd(static_cast<const std::complex<float>*>(p)[i]); }
  static void Store(void* p, int64_t i, cd v) {
    static_cast<std::complex<float>*>(p)[i] =
        std::complex<float>(static_cast<float>(v.real()), static_cast<float>(v.imag()));
  }
};
struct C128 {
  using Real = F64;
  static cd Load(const void* p, int64_t i) { return static_cast<const cd*>(p)[i]; }
  static void Store(void* p, int64_t i, cd v) { static_cast<cd*>(p)[i] = v; }
};
template <const Narrow& kFormat>
struct Half {
  using Real = Half;
  static cd Load(const void* p, int64_t i) {
    return cd(NarrowToDouble(kFormat, static_cast<const uint16_t*>(p)[i]), 0);
  }
  static void Store(void* p, int64_t i, cd v) {
    static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(DoubleToNarrow(kFormat, v.real()));
  }
};

template <typename T>
std::vector<cd> Load(const void* p, int64_t count) {
  std::vector<cd> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[i] = T::Load(p, i);
  return out;
}

template <typename T>
void Store(void* p, const std::vector<cd>& v) {
  for (size_t i = 0; i < v.size(); ++i) T::Store(p, static_cast<int64_t>(i), v[i]);
}

}  // namespace xlac_rt_linalg
