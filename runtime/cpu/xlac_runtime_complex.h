/* Scalar complex kernels shared by the reference interpreter and compiled code (C99).
 *
 * These are the ops whose results depend on how the C++ standard library and the compiler evaluate them (full-range
 * complex multiply and divide with their NaN recovery, libm's complex functions), so both backends call this one
 * implementation instead of each reproducing it. A complex value is a pointer to its {real, imag} pair (the layout
 * of C99 _Complex and std::complex); `out` may alias an input. Exact ops (add, subtract, negate, real, imag,
 * comparisons, conversions, max/min) are not here: compiled code inlines them.
 *
 * mul, div: the std::complex operators. pow(a, b): 1 when a == 1 or b == 0; a when a is +inf (real) and b a
 * positive real; 0 when a is +inf and b a negative real; otherwise std::pow. atan2(a, b) = -i log((b + i a) /
 * sqrt(b*b + a*a)). rsqrt = 1/sqrt(z), logistic = 1/(1 + exp(-z)), sign = z/|z| (0 at 0), cbrt = exp(log(z)/3),
 * expm1 and log1p avoid cancellation near zero (computed in double for c64); abs and the rest are the std::
 * functions of the same name. */
#ifndef XLAC_RUNTIME_COMPLEX_H_
#define XLAC_RUNTIME_COMPLEX_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* c64: float pairs. */
void xlac_rt_c64_mul(const float* a, const float* b, float* out);
void xlac_rt_c64_div(const float* a, const float* b, float* out);
void xlac_rt_c64_pow(const float* a, const float* b, float* out);
void xlac_rt_c64_atan2(const float* a, const float* b, float* out);
void xlac_rt_c64_sqrt(const float* a, float* out);
void xlac_rt_c64_rsqrt(const float* a, float* out);
void xlac_rt_c64_cbrt(const float* a, float* out);
void xlac_rt_c64_exp(const float* a, float* out);
void xlac_rt_c64_expm1(const float* a, float* out);
void xlac_rt_c64_log(const float* a, float* out);
void xlac_rt_c64_log1p(const float* a, float* out);
void xlac_rt_c64_logistic(const float* a, float* out);
void xlac_rt_c64_sign(const float* a, float* out);
void xlac_rt_c64_sin(const float* a, float* out);
void xlac_rt_c64_cos(const float* a, float* out);
void xlac_rt_c64_tan(const float* a, float* out);
void xlac_rt_c64_sinh(const float* a, float* out);
void xlac_rt_c64_cosh(const float* a, float* out);
void xlac_rt_c64_tanh(const float* a, float* out);
void xlac_rt_c64_asin(const float* a, float* out);
void xlac_rt_c64_acos(const float* a, float* out);
void xlac_rt_c64_atan(const float* a, float* out);
void xlac_rt_c64_asinh(const float* a, float* out);
void xlac_rt_c64_acosh(const float* a, float* out);
void xlac_rt_c64_atanh(const float* a, float* out);
float xlac_rt_c64_abs(const float* a);

/* c128: double pairs. */
void xlac_rt_c128_mul(const double* a, const double* b, double* out);
void xlac_rt_c128_div(const double* a, const double* b, double* out);
void xlac_rt_c128_pow(const double* a, const double* b, double* out);
void xlac_rt_c128_atan2(const double* a, const double* b, double* out);
void xlac_rt_c128_sqrt(const double* a, double* out);
void xlac_rt_c128_rsqrt(const double* a, double* out);
void xlac_rt_c128_cbrt(const double* a, double* out);
void xlac_rt_c128_exp(const double* a, double* out);
void xlac_rt_c128_expm1(const double* a, double* out);
void xlac_rt_c128_log(const double* a, double* out);
void xlac_rt_c128_log1p(const double* a, double* out);
void xlac_rt_c128_logistic(const double* a, double* out);
void xlac_rt_c128_sign(const double* a, double* out);
void xlac_rt_c128_sin(const double* a, double* out);
void xlac_rt_c128_cos(const double* a, double* out);
void xlac_rt_c128_tan(const double* a, double* out);
void xlac_rt_c128_sinh(const double* a, double* out);
void xlac_rt_c128_cosh(const double* a, double* out);
void xlac_rt_c128_tanh(const double* a, double* out);
void xlac_rt_c128_asin(const double* a, double* out);
void xlac_rt_c128_acos(const double* a, double* out);
void xlac_rt_c128_atan(const double* a, double* out);
void xlac_rt_c128_asinh(const double* a, double* out);
void xlac_rt_c128_acosh(const double* a, double* out);
void xlac_rt_c128_atanh(const double* a, double* out);
double xlac_rt_c128_abs(const double* a);

/* Every function above by name, for hosts that bind runtime symbols explicitly (the JIT): `*count` entries. */
typedef struct XlacRtComplexSymbol {
  const char* name;
  void* address;
} XlacRtComplexSymbol;
const XlacRtComplexSymbol* xlac_rt_complex_symbols(int64_t* count);

#ifdef __cplusplus
}
#endif

#endif /* XLAC_RUNTIME_COMPLEX_H_ */
