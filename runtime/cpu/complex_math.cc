// Scalar complex kernels (see xlac_runtime_complex.h). The reference interpreter calls these same functions for its
// complex elementwise ops, so compiled code and the oracle agree bit for bit by construction; each expression is the
// one XLA's evaluator uses, evaluated with std::complex (the compiler's full-range multiply/divide, libm's c*
// functions) under -ffp-contract=off.
#include <cmath>
#include <complex>
#include <iterator>

#include "runtime/cpu/xlac_runtime_complex.h"

namespace {

template <typename R>
using C = std::complex<R>;

template <typename R>
C<R> Load(const R* p) {
  return C<R>(p[0], p[1]);
}
template <typename R>
void Store(R* p, C<R> v) {
  p[0] = v.real();
  p[1] = v.imag();
}

template <typename R>
C<R> Pow(C<R> a, C<R> b) {
  // 1^x = 1 and x^0 = 1 regardless of x (Kahan, "Much Ado About Nothing's Sign Bit").
  if (a == C<R>(1) || b == C<R>(0)) return C<R>(1);
  auto is_pos_inf = [](C<R> c) { return c.imag() == 0 && c.real() > 0 && std::isinf(c.real()); };
  if (is_pos_inf(a) && b.real() > 0 && b.imag() == 0) return a;
  if (is_pos_inf(a) && b.real() < 0 && b.imag() == 0) return C<R>(0);
  return std::pow(a, b);
}

// atan2(y, x) = -i * log((x + i*y) / sqrt(x^2 + y^2)), as XLA's evaluator defines it for complex.
template <typename R>
C<R> Atan2(C<R> y, C<R> x) {
  const C<R> i(0, 1);
  return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
}

template <typename R>
C<R> Sign(C<R> a) {
  R m = std::abs(a);
  return m == 0 ? C<R>(0) : a / m;
}

// exp(z)-1 and log(1+z) without the cancellation of the naive forms near zero, in double for c64 too.
template <typename R>
C<R> Expm1(C<R> z) {
  double x = z.real(), y = z.imag();
  double s = std::sin(y / 2);
  double re = std::expm1(x) * std::cos(y) - 2 * s * s;  // e^x cos y - 1
  double im = std::exp(x) * std::sin(y);
  return C<R>(static_cast<R>(re), static_cast<R>(im));
}
template <typename R>
C<R> Log1p(C<R> z) {
  double x = z.real(), y = z.imag();
  double re;
  double m = std::hypot(1 + x, y);
  if (m > 0.5 && m < 2) {
    re = 0.5 * std::log1p(x * (x + 2) + y * y);  // log|1+z| without cancellation when |1+z| ~ 1
  } else {
    re = std::log(m);
  }
  double im = std::atan2(y, 1 + x);
  return C<R>(static_cast<R>(re), static_cast<R>(im));
}

}  // namespace

#define XLAC_BINARY(T, R, name, expr)                           \
  void xlac_rt_##T##_##name(const R* pa, const R* pb, R* out) { \
    C<R> a = Load(pa), b = Load(pb);                            \
    Store(out, expr);                                           \
  }
#define XLAC_UNARY(T, R, name, expr)               \
  void xlac_rt_##T##_##name(const R* pa, R* out) { \
    C<R> x = Load(pa);                             \
    Store(out, expr);                              \
  }
#define XLAC_COMPLEX_KERNELS(T, R)                               \
  XLAC_BINARY(T, R, mul, a* b)                                   \
  XLAC_BINARY(T, R, div, a / b)                                  \
  XLAC_BINARY(T, R, pow, Pow(a, b))                              \
  XLAC_BINARY(T, R, atan2, Atan2(a, b))                          \
  XLAC_UNARY(T, R, sqrt, std::sqrt(x))                           \
  XLAC_UNARY(T, R, rsqrt, C<R>(1) / std::sqrt(x))                \
  XLAC_UNARY(T, R, cbrt, std::exp(std::log(x) / R(3)))           \
  XLAC_UNARY(T, R, exp, std::exp(x))                             \
  XLAC_UNARY(T, R, expm1, Expm1(x))                              \
  XLAC_UNARY(T, R, log, std::log(x))                             \
  XLAC_UNARY(T, R, log1p, Log1p(x))                              \
  XLAC_UNARY(T, R, logistic, C<R>(1) / (C<R>(1) + std::exp(-x))) \
  XLAC_UNARY(T, R, sign, Sign(x))                                \
  XLAC_UNARY(T, R, sin, std::sin(x))                             \
  XLAC_UNARY(T, R, cos, std::cos(x))                             \
  XLAC_UNARY(T, R, tan, std::tan(x))                             \
  XLAC_UNARY(T, R, sinh, std::sinh(x))                           \
  XLAC_UNARY(T, R, cosh, std::cosh(x))                           \
  XLAC_UNARY(T, R, tanh, std::tanh(x))                           \
  XLAC_UNARY(T, R, asin, std::asin(x))                           \
  XLAC_UNARY(T, R, acos, std::acos(x))                           \
  XLAC_UNARY(T, R, atan, std::atan(x))                           \
  XLAC_UNARY(T, R, asinh, std::asinh(x))                         \
  XLAC_UNARY(T, R, acosh, std::acosh(x))                         \
  XLAC_UNARY(T, R, atanh, std::atanh(x))                         \
  R xlac_rt_##T##_abs(const R* pa) { return std::abs(Load(pa)); }

extern "C" {
XLAC_COMPLEX_KERNELS(c64, float)
XLAC_COMPLEX_KERNELS(c128, double)
}

#define XLAC_SYMBOL(T, name) {"xlac_rt_" #T "_" #name, reinterpret_cast<void*>(&xlac_rt_##T##_##name)},
#define XLAC_SYMBOLS(T)                                                                                           \
  XLAC_SYMBOL(T, mul)                                                                                             \
  XLAC_SYMBOL(T, div)                                                                                             \
  XLAC_SYMBOL(T, pow)                                                                                             \
  XLAC_SYMBOL(T, atan2)                                                                                           \
  XLAC_SYMBOL(T, sqrt) XLAC_SYMBOL(T, rsqrt) XLAC_SYMBOL(T, cbrt) XLAC_SYMBOL(T, exp) XLAC_SYMBOL(T, expm1)       \
      XLAC_SYMBOL(T, log) XLAC_SYMBOL(T, log1p) XLAC_SYMBOL(T, logistic) XLAC_SYMBOL(T, sign) XLAC_SYMBOL(T, sin) \
          XLAC_SYMBOL(T, cos) XLAC_SYMBOL(T, tan) XLAC_SYMBOL(T, sinh) XLAC_SYMBOL(T, cosh) XLAC_SYMBOL(T, tanh)  \
              XLAC_SYMBOL(T, asin) XLAC_SYMBOL(T, acos) XLAC_SYMBOL(T, atan) XLAC_SYMBOL(T, asinh)                \
                  XLAC_SYMBOL(T, acosh) XLAC_SYMBOL(T, atanh) XLAC_SYMBOL(T, abs)

const XlacRtComplexSymbol* xlac_rt_complex_symbols(int64_t* count) {
  static const XlacRtComplexSymbol kSymbols[] = {XLAC_SYMBOLS(c64) XLAC_SYMBOLS(c128)};
  *count = static_cast<int64_t>(std::size(kSymbols));
  return kSymbols;
}
