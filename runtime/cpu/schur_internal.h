// Internal to the nonsymmetric eigen kernels (schur.cc, lahqr.cc): LAPACK's machine constants and element helpers,
// the square matrices they work on, and the QR iteration both Schur decompositions run.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "runtime/cpu/linalg_elements.h"

namespace xlac_rt_schur {

using xlac_rt_linalg::cd;

inline constexpr double kUlp = DBL_EPSILON;  // LAPACK's dlamch('P')
inline constexpr double kSafeMin = DBL_MIN;  // dlamch('S')

inline double Abs1(double v) { return std::fabs(v); }
inline double Abs1(cd v) { return std::fabs(v.real()) + std::fabs(v.imag()); }
inline double Abs(double v) { return std::fabs(v); }
inline double Abs(cd v) { return std::abs(v); }
inline double Conj(double v) { return v; }
inline cd Conj(cd v) { return std::conj(v); }

// A dense row-major n x n matrix of S (double or complex<double>).
template <typename S>
struct Square {
  int64_t n = 0;
  std::vector<S> v;
  explicit Square(int64_t size) : n(size), v(static_cast<size_t>(size * size), S(0)) {}
  S& operator()(int64_t i, int64_t j) { return v[static_cast<size_t>(i * n + j)]; }
  S operator()(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * n + j)]; }
  static Square Identity(int64_t size) {
    Square q(size);
    for (int64_t i = 0; i < size; ++i) q(i, i) = 1;
    return q;
  }
};

// sqrt(sum |x_i|^2) without overflow or underflow (nrm2).
template <typename S>
inline double Nrm2(const S* x, int64_t count, int64_t stride) {
  double scale = 0;
  for (int64_t i = 0; i < count; ++i) scale = std::max(scale, Abs1(x[i * stride]));
  if (scale == 0 || !std::isfinite(scale)) return scale;
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) sum += std::norm(x[i * stride] / scale);
  return scale * std::sqrt(sum);
}

// LAPACK's larfg: (alpha, x) -> (beta, v) with H^H (alpha; x) = (beta; 0), H = I - tau (1; v)(1; v)^H, beta real.
// Returns tau (0: H = I).
inline double Larfg(double* alpha, double* x, int64_t count, int64_t stride) {
  const double xnorm = Nrm2(x, count, stride);
  if (xnorm == 0) return 0;
  const double beta = -std::copysign(std::hypot(*alpha, xnorm), *alpha);
  const double tau = (beta - *alpha) / beta;
  const double scale = 1 / (*alpha - beta);
  for (int64_t i = 0; i < count; ++i) x[i * stride] *= scale;
  *alpha = beta;
  return tau;
}

inline cd Larfg(cd* alpha, cd* x, int64_t count, int64_t stride) {
  const double xnorm = Nrm2(x, count, stride);
  const double ar = alpha->real(), ai = alpha->imag();
  if (xnorm == 0 && ai == 0) return 0;
  const double beta = -std::copysign(std::hypot(std::hypot(ar, ai), xnorm), ar);
  const cd tau((beta - ar) / beta, -ai / beta);
  const cd scale = 1.0 / (*alpha - beta);
  for (int64_t i = 0; i < count; ++i) x[i * stride] *= scale;
  *alpha = beta;
  return tau;
}

// lahqr (lahqr.cc), with wantt and wantz, on the active block ilo..ihi (1-based): h (upper Hessenberg) becomes upper
// triangular (zlahqr) or quasi-triangular with standardized 2x2 blocks (dlahqr), z accumulates the transformations,
// w (wr + i wi) receives the eigenvalues. Returns 0, or the 1-based row whose eigenvalue failed to converge.
int32_t Zlahqr(Square<cd>& hm, Square<cd>& zm, int64_t ilo, int64_t ihi, cd* w);
int32_t Dlahqr(Square<double>& hm, Square<double>& zm, int64_t ilo, int64_t ihi, double* wr, double* wi);

}  // namespace xlac_rt_schur
