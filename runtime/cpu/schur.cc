// Nonsymmetric eigenproblems shared by compiled code and the interpreter (xlac_runtime_kernels.h): the Hessenberg
// reduction (gehrd), the Schur decomposition (gees) and eigenvalues with left and right eigenvectors (geev).
//
// Every routine is LAPACK's unblocked one, followed step for step in double precision (complex<double> for complex
// types), and the results are rounded once to the element type:
//   gebal   balancing: permutations isolating eigenvalues, then (geev) diagonal scaling by powers of 2;
//   gehd2   Householder reduction to upper Hessenberg form (larfg's reflectors), orghr / unghr its Q;
//   lahqr   the QR iteration hseqr runs on small matrices: zlahqr's single shift with Wilkinson's shift for complex
//           types, dlahqr's Francis double shift for real types with dlanv2's standardized 2x2 blocks (equal
//           diagonal, off-diagonals of opposite signs) for complex-conjugate pairs; the Ahues-Kressner deflation
//           test and the exceptional shifts after 10 and 20 iterations without deflation;
//   trevc   eigenvectors of the (quasi-)triangular T by back-substitution (x_k = 1 at the eigenvalue, pivots below
//           smin raised to smin), back-transformed by the Schur vectors; gebak undoes the balancing;
//   geev's  normalization: unit 2-norm, then the component of largest modulus made real (positive for complex
//           types; for a real type's complex pair, dlartg's rotation keeps the sign of its real part).
// So the eigenvalue order, the Schur form's block structure and the eigenvectors' normalization are LAPACK's (checked
// against reference LAPACK 3.11 on random, triangular, permutable and badly scaled matrices: eigenvalues and complex
// types' eigenvectors agree to rounding). What rounding decides stays undecided: a Schur vector's phase (a real
// type's: its sign, and with it the sign of a real eigenvector) follows the sign of a sub-diagonal entry converging
// to zero, so does which of a 2x2 block's standardized forms comes out, and an eigenvector of a repeated eigenvalue
// is as ill-determined as LAPACK's. hseqr's multishift variant for n >= 75 (aggressive early deflation) is not
// reproduced, which may reorder the eigenvalues of large matrices.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "runtime/cpu/linalg_elements.h"
#include "runtime/cpu/xlac_runtime_kernels.h"

namespace {

using namespace xlac_rt_linalg;  // NOLINT: the element structs name the kernels' suffixes

constexpr double kNaN = NAN;
constexpr double kUlp = DBL_EPSILON;  // LAPACK's dlamch('P')
constexpr double kSafeMin = DBL_MIN;  // dlamch('S')

double Abs1(double v) { return std::fabs(v); }
double Abs1(cd v) { return std::fabs(v.real()) + std::fabs(v.imag()); }
double Abs(double v) { return std::fabs(v); }
double Abs(cd v) { return std::abs(v); }
double Conj(double v) { return v; }
cd Conj(cd v) { return std::conj(v); }

// The element storage of a type's complex counterpart (geev's eigenvectors of a real matrix are complex).
template <typename T>
struct ComplexOf {
  using Type = T;
};
template <>
struct ComplexOf<F32> {
  using Type = C64;
};
template <>
struct ComplexOf<F64> {
  using Type = C128;
};

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
double Nrm2(const S* x, int64_t count, int64_t stride) {
  double scale = 0;
  for (int64_t i = 0; i < count; ++i) scale = std::max(scale, Abs1(x[i * stride]));
  if (scale == 0 || !std::isfinite(scale)) return scale;
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) sum += std::norm(x[i * stride] / scale);
  return scale * std::sqrt(sum);
}

// LAPACK's larfg: (alpha, x) -> (beta, v) with H^H (alpha; x) = (beta; 0), H = I - tau (1; v)(1; v)^H, beta real.
// Returns tau (0: H = I).
double Larfg(double* alpha, double* x, int64_t count, int64_t stride) {
  const double xnorm = Nrm2(x, count, stride);
  if (xnorm == 0) return 0;
  const double beta = -std::copysign(std::hypot(*alpha, xnorm), *alpha);
  const double tau = (beta - *alpha) / beta;
  const double scale = 1 / (*alpha - beta);
  for (int64_t i = 0; i < count; ++i) x[i * stride] *= scale;
  *alpha = beta;
  return tau;
}

cd Larfg(cd* alpha, cd* x, int64_t count, int64_t stride) {
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

bool AllFinite(const std::vector<cd>& v, int64_t begin, int64_t count) {
  for (int64_t i = begin; i < begin + count; ++i) {
    if (!std::isfinite(v[i].real()) || !std::isfinite(v[i].imag())) return false;
  }
  return true;
}

// ---- balancing (gebal, gebak) ----

struct Balance {
  int64_t ilo = 0, ihi = -1;  // 0-based, inclusive: the rows and columns the QR iteration works on
  std::vector<int64_t> perm;  // outside ilo..ihi: the row swapped with this one
  std::vector<double> scale;  // inside: the scaling factor
};

template <typename S>
Balance Gebal(Square<S>& a, bool scale) {
  const int64_t n = a.n;
  Balance bal;
  bal.perm.resize(static_cast<size_t>(n));
  std::iota(bal.perm.begin(), bal.perm.end(), 0);
  bal.scale.assign(static_cast<size_t>(n), 1.0);
  if (n == 0) return bal;
  int64_t k = 0, l = n - 1;
  // Exchanges rows and columns `from` and `to` of the rows 0..l and the columns k..n-1.
  auto exchange = [&](int64_t from, int64_t to) {
    for (int64_t r = 0; r <= l; ++r) std::swap(a(r, from), a(r, to));
    for (int64_t c = k; c < n; ++c) std::swap(a(from, c), a(to, c));
  };
  // Rows isolating an eigenvalue (zero off the diagonal in columns 0..l) go to the bottom.
  for (bool again = true; again;) {
    again = false;
    for (int64_t i = l; i >= 0; --i) {
      bool isolated = true;
      for (int64_t j = 0; j <= l && isolated; ++j) isolated = i == j || a(i, j) == S(0);
      if (!isolated) continue;
      bal.perm[static_cast<size_t>(l)] = i;
      if (i != l) exchange(i, l);
      again = true;
      if (l == 0) {
        bal.ilo = bal.ihi = 0;
        return bal;
      }
      --l;
    }
  }
  // Columns isolating an eigenvalue (zero off the diagonal in rows k..l) go to the left.
  for (bool again = true; again;) {
    again = false;
    for (int64_t j = k; j <= l; ++j) {
      bool isolated = true;
      for (int64_t i = k; i <= l && isolated; ++i) isolated = i == j || a(i, j) == S(0);
      if (!isolated) continue;
      bal.perm[static_cast<size_t>(k)] = j;
      if (j != k) exchange(j, k);
      again = true;
      ++k;
    }
  }
  bal.ilo = k;
  bal.ihi = l;
  if (!scale) return bal;
  // Scaling by powers of 2 until the rows and columns of k..l have balanced norms.
  constexpr double kFactor = 0.95;
  const double sfmin1 = kSafeMin / kUlp, sfmax1 = 1 / sfmin1, sfmin2 = sfmin1 * 2, sfmax2 = 1 / sfmin2;
  for (bool again = true; again;) {
    again = false;
    for (int64_t i = k; i <= l; ++i) {
      double c = Nrm2(&a(k, i), l - k + 1, n), r = Nrm2(&a(i, k), l - k + 1, 1);
      int64_t ica = 0, ira = k;
      for (int64_t q = 1; q <= l; ++q) {
        if (Abs1(a(q, i)) > Abs1(a(ica, i))) ica = q;
      }
      for (int64_t q = k + 1; q < n; ++q) {
        if (Abs1(a(i, q)) > Abs1(a(i, ira))) ira = q;
      }
      double ca = Abs(a(ica, i)), ra = Abs(a(i, ira));
      if (c == 0 || r == 0) continue;
      if (std::isnan(c + ca + r + ra)) return bal;
      double g = r / 2, f = 1;
      const double s = c + r;
      while (c < g && std::max({f, c, ca}) < sfmax2 && std::min({r, g, ra}) > sfmin2) {
        f *= 2, c *= 2, ca *= 2, r /= 2, g /= 2, ra /= 2;
      }
      g = c / 2;
      while (g >= r && std::max(r, ra) < sfmax2 && std::min({f, c, g, ca}) > sfmin2) {
        f /= 2, c /= 2, g /= 2, ca /= 2, r *= 2, ra *= 2;
      }
      double& si = bal.scale[static_cast<size_t>(i)];
      if (c + r >= kFactor * s) continue;
      if (f < 1 && si < 1 && f * si <= sfmin1) continue;
      if (f > 1 && si > 1 && si >= sfmax1 / f) continue;
      si *= f;
      again = true;
      const double inverse = 1 / f;
      for (int64_t q = k; q < n; ++q) a(i, q) *= inverse;
      for (int64_t q = 0; q <= l; ++q) a(q, i) *= f;
    }
  }
  return bal;
}

// gebak: the rows of the vectors v (n x n, one vector a column) back to the unbalanced matrix's: scaled by the
// factors (right vectors) or their inverses (left vectors), then the permutations undone.
template <typename S>
void Gebak(const Balance& bal, bool left, Square<S>& v) {
  const int64_t n = v.n;
  for (int64_t i = bal.ilo; i <= bal.ihi; ++i) {
    const double s = left ? 1 / bal.scale[static_cast<size_t>(i)] : bal.scale[static_cast<size_t>(i)];
    for (int64_t j = 0; j < n; ++j) v(i, j) *= s;
  }
  auto swap_rows = [&](int64_t i) {
    const int64_t k = bal.perm[static_cast<size_t>(i)];
    if (k == i) return;
    for (int64_t j = 0; j < n; ++j) std::swap(v(i, j), v(k, j));
  };
  for (int64_t i = bal.ilo - 1; i >= 0; --i) swap_rows(i);
  for (int64_t i = bal.ihi + 1; i < n; ++i) swap_rows(i);
}

// ---- Hessenberg reduction (gehd2, orghr) ----

// Reduces rows and columns ilo..ihi (0-based, inclusive) of a to upper Hessenberg form; the reflector v_i (v_i[i+1]
// = 1 implied) is left below the sub-diagonal in column i, its scale in taus[i] (taus[n-1], zero outside ilo..ihi-1).
template <typename S>
void Gehd2(Square<S>& a, int64_t ilo, int64_t ihi, S* taus) {
  const int64_t n = a.n;
  for (int64_t i = 0; i + 1 < n; ++i) taus[i] = 0;
  std::vector<S> v(static_cast<size_t>(n));
  for (int64_t i = ilo; i < ihi; ++i) {
    const int64_t m = ihi - i;  // the reflector acts on rows i+1..ihi
    S alpha = a(i + 1, i);
    const S tau = Larfg(&alpha, &a(std::min(i + 2, n - 1), i), m - 1, n);
    taus[i] = tau;
    if (tau != S(0)) {
      v[0] = 1;
      for (int64_t q = 1; q < m; ++q) v[q] = a(i + 1 + q, i);
      // From the right on rows 0..ihi: A = A - tau (A v) v^H.
      for (int64_t r = 0; r <= ihi; ++r) {
        S s = 0;
        for (int64_t q = 0; q < m; ++q) s += a(r, i + 1 + q) * v[q];
        s *= tau;
        for (int64_t q = 0; q < m; ++q) a(r, i + 1 + q) -= s * Conj(v[q]);
      }
      // H^H from the left on columns i+1..n-1: A = A - conj(tau) v (v^H A).
      for (int64_t c = i + 1; c < n; ++c) {
        S s = 0;
        for (int64_t q = 0; q < m; ++q) s += Conj(v[q]) * a(i + 1 + q, c);
        s *= Conj(tau);
        for (int64_t q = 0; q < m; ++q) a(i + 1 + q, c) -= v[q] * s;
      }
    }
    a(i + 1, i) = alpha;
  }
}

// Q = H_ilo ... H_{ihi-1} of gehd2's reflectors (orghr / unghr).
template <typename S>
Square<S> Orghr(const Square<S>& a, const S* taus, int64_t ilo, int64_t ihi) {
  const int64_t n = a.n;
  Square<S> q = Square<S>::Identity(n);
  std::vector<S> v(static_cast<size_t>(n));
  for (int64_t i = ihi - 1; i >= ilo; --i) {
    const S tau = taus[i];
    if (tau == S(0)) continue;
    const int64_t m = ihi - i;
    v[0] = 1;
    for (int64_t r = 1; r < m; ++r) v[r] = a(i + 1 + r, i);
    for (int64_t c = i + 1; c <= ihi; ++c) {
      S s = 0;
      for (int64_t r = 0; r < m; ++r) s += Conj(v[r]) * q(i + 1 + r, c);
      s *= tau;
      for (int64_t r = 0; r < m; ++r) q(i + 1 + r, c) -= v[r] * s;
    }
  }
  return q;
}

// The Hessenberg matrix of gehd2's packed result: zeros below the sub-diagonal.
template <typename S>
Square<S> HessenbergPart(const Square<S>& a) {
  Square<S> h = a;
  for (int64_t i = 2; i < a.n; ++i) {
    for (int64_t j = 0; j + 1 < i; ++j) h(i, j) = 0;
  }
  return h;
}

// ---- the QR iteration (lahqr) ----

constexpr int64_t kExceptionalShift = 10;  // lahqr's KEXSH

// zlahqr with wantt and wantz: h (upper Hessenberg, rows/columns ilo..ihi 1-based active) becomes upper triangular,
// z accumulates the transformations, w[ilo-1..ihi-1] the eigenvalues. Returns 0, or the (1-based) row whose
// eigenvalue failed to converge. Written with 1-based indices to follow LAPACK line by line.
int32_t Zlahqr(Square<cd>& hm, Square<cd>& zm, int64_t ilo, int64_t ihi, cd* w) {
  const int64_t n = hm.n;
  auto H = [&](int64_t i, int64_t j) -> cd& { return hm(i - 1, j - 1); };
  auto Z = [&](int64_t i, int64_t j) -> cd& { return zm(i - 1, j - 1); };
  if (n == 0) return 0;
  if (ilo == ihi) {
    w[ilo - 1] = H(ilo, ilo);
    return 0;
  }
  for (int64_t j = ilo; j <= ihi - 3; ++j) H(j + 2, j) = H(j + 3, j) = 0;
  if (ilo <= ihi - 2) H(ihi, ihi - 2) = 0;
  const int64_t jlo = 1, jhi = n, i1 = 1, i2 = n;
  // Real sub-diagonal entries.
  for (int64_t i = ilo + 1; i <= ihi; ++i) {
    if (H(i, i - 1).imag() == 0) continue;
    cd sc = H(i, i - 1) / Abs1(H(i, i - 1));
    sc = std::conj(sc) / std::abs(sc);
    H(i, i - 1) = std::abs(H(i, i - 1));
    for (int64_t j = i; j <= jhi; ++j) H(i, j) *= sc;
    for (int64_t j = jlo; j <= std::min(jhi, i + 1); ++j) H(j, i) *= std::conj(sc);
    for (int64_t j = 1; j <= n; ++j) Z(j, i) *= std::conj(sc);
  }
  const int64_t nh = ihi - ilo + 1;
  const double smlnum = kSafeMin * (static_cast<double>(nh) / kUlp);
  const int64_t itmax = 30 * std::max<int64_t>(10, nh);
  int64_t kdefl = 0;
  for (int64_t i = ihi; i >= ilo;) {
    int64_t l = ilo;
    bool converged = false;
    for (int64_t its = 0; its <= itmax; ++its) {
      // A single small sub-diagonal entry.
      int64_t k = i;
      for (; k > l; --k) {
        if (Abs1(H(k, k - 1)) <= smlnum) break;
        double tst = Abs1(H(k - 1, k - 1)) + Abs1(H(k, k));
        if (tst == 0) {
          if (k - 2 >= ilo) tst += std::fabs(H(k - 1, k - 2).real());
          if (k + 1 <= ihi) tst += std::fabs(H(k + 1, k).real());
        }
        if (std::fabs(H(k, k - 1).real()) <= kUlp * tst) {
          const double ab = std::max(Abs1(H(k, k - 1)), Abs1(H(k - 1, k)));
          const double ba = std::min(Abs1(H(k, k - 1)), Abs1(H(k - 1, k)));
          const double aa = std::max(Abs1(H(k, k)), Abs1(H(k - 1, k - 1) - H(k, k)));
          const double bb = std::min(Abs1(H(k, k)), Abs1(H(k - 1, k - 1) - H(k, k)));
          const double s = aa + ab;
          if (ba * (ab / s) <= std::max(smlnum, kUlp * (bb * (aa / s)))) break;
        }
      }
      l = k;
      if (l > ilo) H(l, l - 1) = 0;
      if (l >= i) {
        converged = true;
        break;
      }
      ++kdefl;
      cd t;
      if (kdefl % (2 * kExceptionalShift) == 0) {
        t = 0.75 * std::fabs(H(i, i - 1).real()) + H(i, i);
      } else if (kdefl % kExceptionalShift == 0) {
        t = 0.75 * std::fabs(H(l + 1, l).real()) + H(l, l);
      } else {
        // Wilkinson's shift.
        t = H(i, i);
        const cd u = std::sqrt(H(i - 1, i)) * std::sqrt(H(i, i - 1));
        double s = Abs1(u);
        if (s != 0) {
          const cd x = 0.5 * (H(i - 1, i - 1) - t);
          const double sx = Abs1(x);
          s = std::max(s, Abs1(x));
          cd y = s * std::sqrt((x / s) * (x / s) + (u / s) * (u / s));
          if (sx > 0 && (x / sx).real() * y.real() + (x / sx).imag() * y.imag() < 0) y = -y;
          t -= u * (u / (x + y));
        }
      }
      // Two consecutive small sub-diagonal entries: start the sweep at row m.
      int64_t m = i - 1;
      cd v[2];
      for (;; --m) {
        const cd h11 = H(m, m), h22 = H(m + 1, m + 1);
        cd h11s = h11 - t;
        double h21 = H(m + 1, m).real();
        const double s = Abs1(h11s) + std::fabs(h21);
        h11s /= s;
        h21 /= s;
        v[0] = h11s;
        v[1] = h21;
        if (m == l) break;
        const double h10 = H(m, m - 1).real();
        if (std::fabs(h10) * std::fabs(h21) <= kUlp * (Abs1(h11s) * (Abs1(h11) + Abs1(h22)))) break;
      }
      // The single-shift QR sweep.
      for (int64_t k2 = m; k2 <= i - 1; ++k2) {
        if (k2 > m) {
          v[0] = H(k2, k2 - 1);
          v[1] = H(k2 + 1, k2 - 1);
        }
        const cd t1 = Larfg(&v[0], &v[1], 1, 1);
        if (k2 > m) {
          H(k2, k2 - 1) = v[0];
          H(k2 + 1, k2 - 1) = 0;
        }
        const cd v2 = v[1];
        const double t2 = (t1 * v2).real();
        for (int64_t j = k2; j <= i2; ++j) {
          const cd sum = std::conj(t1) * H(k2, j) + t2 * H(k2 + 1, j);
          H(k2, j) -= sum;
          H(k2 + 1, j) -= sum * v2;
        }
        for (int64_t j = i1; j <= std::min(k2 + 2, i); ++j) {
          const cd sum = t1 * H(j, k2) + t2 * H(j, k2 + 1);
          H(j, k2) -= sum;
          H(j, k2 + 1) -= sum * std::conj(v2);
        }
        for (int64_t j = 1; j <= n; ++j) {
          const cd sum = t1 * Z(j, k2) + t2 * Z(j, k2 + 1);
          Z(j, k2) -= sum;
          Z(j, k2 + 1) -= sum * std::conj(v2);
        }
        if (k2 == m && m > l) {
          // Started below l: rescale so that H(m, m-1) stays real.
          cd temp = 1.0 - t1;
          temp /= std::abs(temp);
          H(m + 1, m) *= std::conj(temp);
          if (m + 2 <= i) H(m + 2, m + 1) *= temp;
          for (int64_t j = m; j <= i; ++j) {
            if (j == m + 1) continue;
            for (int64_t c = j + 1; c <= i2; ++c) H(j, c) *= temp;
            for (int64_t r = i1; r <= j - 1; ++r) H(r, j) *= std::conj(temp);
            for (int64_t r = 1; r <= n; ++r) Z(r, j) *= std::conj(temp);
          }
        }
      }
      // H(i, i-1) real.
      cd temp = H(i, i - 1);
      if (temp.imag() != 0) {
        const double rtemp = std::abs(temp);
        H(i, i - 1) = rtemp;
        temp /= rtemp;
        for (int64_t c = i + 1; c <= i2; ++c) H(i, c) *= std::conj(temp);
        for (int64_t r = i1; r <= i - 1; ++r) H(r, i) *= temp;
        for (int64_t r = 1; r <= n; ++r) Z(r, i) *= temp;
      }
    }
    if (!converged) return static_cast<int32_t>(i);
    w[i - 1] = H(i, i);
    kdefl = 0;
    i = l - 1;
  }
  return 0;
}

// dlanv2: the Schur factorization of the real 2x2 [[a, b], [c, d]] = [[cs, -sn], [sn, cs]] [[aa, bb], [cc, dd]]
// [[cs, sn], [-sn, cs]], standardized: cc = 0 (real eigenvalues) or aa = dd and bb cc < 0 (a complex pair).
void Dlanv2(double& a, double& b, double& c, double& d, double& rt1r, double& rt1i, double& rt2r, double& rt2i,
            double& cs, double& sn) {
  constexpr double kMultpl = 4;
  const double eps = kUlp;
  const double safmn2 = std::pow(2.0, static_cast<int>(std::log(kSafeMin / eps) / std::log(2.0) / 2));
  const double safmx2 = 1 / safmn2;
  if (c == 0) {
    cs = 1;
    sn = 0;
  } else if (b == 0) {
    // Swap rows and columns.
    cs = 0;
    sn = 1;
    std::swap(a, d);
    b = -c;
    c = 0;
  } else if (a - d == 0 && std::copysign(1.0, b) != std::copysign(1.0, c)) {
    cs = 1;
    sn = 0;
  } else {
    double temp = a - d;
    double p = 0.5 * temp;
    const double bcmax = std::max(std::fabs(b), std::fabs(c));
    const double bcmis = std::min(std::fabs(b), std::fabs(c)) * std::copysign(1.0, b) * std::copysign(1.0, c);
    double scale = std::max(std::fabs(p), bcmax);
    double z = (p / scale) * p + (bcmax / scale) * bcmis;
    if (z >= kMultpl * eps) {
      // Real eigenvalues.
      z = p + std::copysign(std::sqrt(scale) * std::sqrt(z), p);
      a = d + z;
      d = d - (bcmax / z) * bcmis;
      const double tau = std::hypot(c, z);
      cs = z / tau;
      sn = c / tau;
      b = b - c;
      c = 0;
    } else {
      // Complex or almost equal real eigenvalues: make the diagonal equal.
      double sigma = b + c;
      for (int count = 1; count <= 20; ++count) {
        scale = std::max(std::fabs(temp), std::fabs(sigma));
        if (scale >= safmx2) {
          sigma *= safmn2;
          temp *= safmn2;
          continue;
        }
        if (scale <= safmn2) {
          sigma *= safmx2;
          temp *= safmx2;
          continue;
        }
        break;
      }
      p = 0.5 * temp;
      double tau = std::hypot(sigma, temp);
      cs = std::sqrt(0.5 * (1 + std::fabs(sigma) / tau));
      sn = -(p / (tau * cs)) * std::copysign(1.0, sigma);
      // [aa bb; cc dd] = [a b; c d] [cs -sn; sn cs], then [a b; c d] = [cs sn; -sn cs] [aa bb; cc dd].
      const double aa = a * cs + b * sn, bb = -a * sn + b * cs;
      const double cc = c * cs + d * sn, dd = -c * sn + d * cs;
      a = aa * cs + cc * sn;
      b = bb * cs + dd * sn;
      c = -aa * sn + cc * cs;
      d = -bb * sn + dd * cs;
      temp = 0.5 * (a + d);
      a = temp;
      d = temp;
      if (c != 0) {
        if (b != 0) {
          if (std::copysign(1.0, b) == std::copysign(1.0, c)) {
            // Real eigenvalues: reduce to upper triangular form.
            const double sab = std::sqrt(std::fabs(b)), sac = std::sqrt(std::fabs(c));
            p = std::copysign(sab * sac, c);
            tau = 1 / std::sqrt(std::fabs(b + c));
            a = temp + p;
            d = temp - p;
            b = b - c;
            c = 0;
            const double cs1 = sab * tau, sn1 = sac * tau;
            temp = cs * cs1 - sn * sn1;
            sn = cs * sn1 + sn * cs1;
            cs = temp;
          }
        } else {
          b = -c;
          c = 0;
          temp = cs;
          cs = -sn;
          sn = temp;
        }
      }
    }
  }
  rt1r = a;
  rt2r = d;
  if (c == 0) {
    rt1i = rt2i = 0;
  } else {
    rt1i = std::sqrt(std::fabs(b)) * std::sqrt(std::fabs(c));
    rt2i = -rt1i;
  }
}

// drot on two vectors of `count` elements: (x, y) = (cs x + sn y, cs y - sn x).
void Rot(double* x, int64_t xstride, double* y, int64_t ystride, int64_t count, double cs, double sn) {
  for (int64_t i = 0; i < count; ++i) {
    const double t = cs * x[i * xstride] + sn * y[i * ystride];
    y[i * ystride] = cs * y[i * ystride] - sn * x[i * xstride];
    x[i * xstride] = t;
  }
}

// dlahqr with wantt and wantz: h becomes quasi-triangular in real Schur form (standardized 2x2 blocks), z
// accumulates the transformations, (wr, wi)[ilo-1..ihi-1] the eigenvalues. Returns as Zlahqr. 1-based as LAPACK.
int32_t Dlahqr(Square<double>& hm, Square<double>& zm, int64_t ilo, int64_t ihi, double* wr, double* wi) {
  const int64_t n = hm.n;
  auto H = [&](int64_t i, int64_t j) -> double& { return hm(i - 1, j - 1); };
  if (n == 0) return 0;
  if (ilo == ihi) {
    wr[ilo - 1] = H(ilo, ilo);
    wi[ilo - 1] = 0;
    return 0;
  }
  for (int64_t j = ilo; j <= ihi - 3; ++j) H(j + 2, j) = H(j + 3, j) = 0;
  if (ilo <= ihi - 2) H(ihi, ihi - 2) = 0;
  const int64_t nh = ihi - ilo + 1;
  const double smlnum = kSafeMin * (static_cast<double>(nh) / kUlp);
  const int64_t i1 = 1, i2 = n;
  const int64_t itmax = 30 * std::max<int64_t>(10, nh);
  constexpr double kDat1 = 0.75, kDat2 = -0.4375;
  int64_t kdefl = 0;
  for (int64_t i = ihi; i >= ilo;) {
    int64_t l = ilo;
    bool converged = false;
    for (int64_t its = 0; its <= itmax; ++its) {
      int64_t k = i;
      for (; k > l; --k) {
        if (std::fabs(H(k, k - 1)) <= smlnum) break;
        double tst = std::fabs(H(k - 1, k - 1)) + std::fabs(H(k, k));
        if (tst == 0) {
          if (k - 2 >= ilo) tst += std::fabs(H(k - 1, k - 2));
          if (k + 1 <= ihi) tst += std::fabs(H(k + 1, k));
        }
        if (std::fabs(H(k, k - 1)) <= kUlp * tst) {
          const double ab = std::max(std::fabs(H(k, k - 1)), std::fabs(H(k - 1, k)));
          const double ba = std::min(std::fabs(H(k, k - 1)), std::fabs(H(k - 1, k)));
          const double aa = std::max(std::fabs(H(k, k)), std::fabs(H(k - 1, k - 1) - H(k, k)));
          const double bb = std::min(std::fabs(H(k, k)), std::fabs(H(k - 1, k - 1) - H(k, k)));
          const double s = aa + ab;
          if (ba * (ab / s) <= std::max(smlnum, kUlp * (bb * (aa / s)))) break;
        }
      }
      l = k;
      if (l > ilo) H(l, l - 1) = 0;
      if (l >= i - 1) {
        converged = true;
        break;
      }
      ++kdefl;
      double h11, h12, h21, h22;
      if (kdefl % (2 * kExceptionalShift) == 0) {
        const double s = std::fabs(H(i, i - 1)) + std::fabs(H(i - 1, i - 2));
        h11 = kDat1 * s + H(i, i);
        h12 = kDat2 * s;
        h21 = s;
        h22 = h11;
      } else if (kdefl % kExceptionalShift == 0) {
        const double s = std::fabs(H(l + 1, l)) + std::fabs(H(l + 2, l + 1));
        h11 = kDat1 * s + H(l, l);
        h12 = kDat2 * s;
        h21 = s;
        h22 = h11;
      } else {
        // Francis' double shift: the eigenvalues of the trailing 2x2.
        h11 = H(i - 1, i - 1);
        h21 = H(i, i - 1);
        h12 = H(i - 1, i);
        h22 = H(i, i);
      }
      double rt1r, rt1i, rt2r, rt2i;
      const double s0 = std::fabs(h11) + std::fabs(h12) + std::fabs(h21) + std::fabs(h22);
      if (s0 == 0) {
        rt1r = rt1i = rt2r = rt2i = 0;
      } else {
        h11 /= s0;
        h21 /= s0;
        h12 /= s0;
        h22 /= s0;
        const double tr = (h11 + h22) / 2;
        const double det = (h11 - tr) * (h22 - tr) - h12 * h21;
        const double rtdisc = std::sqrt(std::fabs(det));
        if (det >= 0) {
          // A complex-conjugate pair of shifts.
          rt1r = tr * s0;
          rt2r = rt1r;
          rt1i = rtdisc * s0;
          rt2i = -rt1i;
        } else {
          // Real shifts: use the one closer to h22 twice.
          rt1r = tr + rtdisc;
          rt2r = tr - rtdisc;
          if (std::fabs(rt1r - h22) <= std::fabs(rt2r - h22)) {
            rt1r *= s0;
            rt2r = rt1r;
          } else {
            rt2r *= s0;
            rt1r = rt2r;
          }
          rt1i = rt2i = 0;
        }
      }
      // Two consecutive small sub-diagonal entries: start the sweep at row m.
      int64_t m = i - 2;
      double v[3];
      for (;; --m) {
        double h21s = H(m + 1, m);
        double s = std::fabs(H(m, m) - rt2r) + std::fabs(rt2i) + std::fabs(h21s);
        h21s = H(m + 1, m) / s;
        v[0] = h21s * H(m, m + 1) + (H(m, m) - rt1r) * ((H(m, m) - rt2r) / s) - rt1i * (rt2i / s);
        v[1] = h21s * (H(m, m) + H(m + 1, m + 1) - rt1r - rt2r);
        v[2] = h21s * H(m + 2, m + 1);
        s = std::fabs(v[0]) + std::fabs(v[1]) + std::fabs(v[2]);
        v[0] /= s;
        v[1] /= s;
        v[2] /= s;
        if (m == l) break;
        const double h00 = std::fabs(H(m, m - 1)) * (std::fabs(v[1]) + std::fabs(v[2]));
        const double h01 =
            kUlp * std::fabs(v[0]) * (std::fabs(H(m - 1, m - 1)) + std::fabs(H(m, m)) + std::fabs(H(m + 1, m + 1)));
        if (h00 <= h01) break;
      }
      // The double-shift QR sweep.
      for (int64_t k2 = m; k2 <= i - 1; ++k2) {
        const int64_t nr = std::min<int64_t>(3, i - k2 + 1);
        if (k2 > m) {
          for (int64_t q = 0; q < nr; ++q) v[q] = H(k2 + q, k2 - 1);
        }
        const double t1 = Larfg(&v[0], &v[1], nr - 1, 1);
        if (k2 > m) {
          H(k2, k2 - 1) = v[0];
          H(k2 + 1, k2 - 1) = 0;
          if (k2 < i - 1) H(k2 + 2, k2 - 1) = 0;
        } else if (m > l) {
          H(k2, k2 - 1) *= 1 - t1;
        }
        const double v2 = v[1], t2 = t1 * v2;
        if (nr == 3) {
          const double v3 = v[2], t3 = t1 * v3;
          for (int64_t j = k2; j <= i2; ++j) {
            const double sum = H(k2, j) + v2 * H(k2 + 1, j) + v3 * H(k2 + 2, j);
            H(k2, j) -= sum * t1;
            H(k2 + 1, j) -= sum * t2;
            H(k2 + 2, j) -= sum * t3;
          }
          for (int64_t j = i1; j <= std::min(k2 + 3, i); ++j) {
            const double sum = H(j, k2) + v2 * H(j, k2 + 1) + v3 * H(j, k2 + 2);
            H(j, k2) -= sum * t1;
            H(j, k2 + 1) -= sum * t2;
            H(j, k2 + 2) -= sum * t3;
          }
          for (int64_t j = 0; j < n; ++j) {
            const double sum = zm(j, k2 - 1) + v2 * zm(j, k2) + v3 * zm(j, k2 + 1);
            zm(j, k2 - 1) -= sum * t1;
            zm(j, k2) -= sum * t2;
            zm(j, k2 + 1) -= sum * t3;
          }
        } else if (nr == 2) {
          for (int64_t j = k2; j <= i2; ++j) {
            const double sum = H(k2, j) + v2 * H(k2 + 1, j);
            H(k2, j) -= sum * t1;
            H(k2 + 1, j) -= sum * t2;
          }
          for (int64_t j = i1; j <= i; ++j) {
            const double sum = H(j, k2) + v2 * H(j, k2 + 1);
            H(j, k2) -= sum * t1;
            H(j, k2 + 1) -= sum * t2;
          }
          for (int64_t j = 0; j < n; ++j) {
            const double sum = zm(j, k2 - 1) + v2 * zm(j, k2);
            zm(j, k2 - 1) -= sum * t1;
            zm(j, k2) -= sum * t2;
          }
        }
      }
    }
    if (!converged) return static_cast<int32_t>(i);
    if (l == i) {
      // One real eigenvalue.
      wr[i - 1] = H(i, i);
      wi[i - 1] = 0;
    } else if (l == i - 1) {
      // A 2x2 block: its standard Schur form, applied to the rest of H and to Z.
      double cs, sn;
      Dlanv2(H(i - 1, i - 1), H(i - 1, i), H(i, i - 1), H(i, i), wr[i - 2], wi[i - 2], wr[i - 1], wi[i - 1], cs, sn);
      if (i2 > i) Rot(&H(i - 1, i + 1), 1, &H(i, i + 1), 1, i2 - i, cs, sn);
      Rot(&H(i1, i - 1), n, &H(i1, i), n, i - i1 - 1, cs, sn);
      Rot(&zm(0, i - 2), n, &zm(0, i - 1), n, n, cs, sn);
    }
    kdefl = 0;
    i = l - 1;
  }
  return 0;
}

// ---- Schur form of a balanced matrix (hseqr) ----

// The eigenvalues of a Schur form (complex types: w; real types: wr + i wi).
struct Eigenvalues {
  std::vector<cd> w;
  std::vector<double> wr, wi;
};

// gehd2, orghr and hseqr on the balanced a: t the Schur form, z the Schur vectors (of the balanced matrix).
// Returns hseqr's info.
int32_t Schur(Square<cd>& a, const Balance& bal, Square<cd>& t, Square<cd>& z, Eigenvalues& ev) {
  const int64_t n = a.n;
  std::vector<cd> taus(static_cast<size_t>(std::max<int64_t>(n - 1, 0)));
  Gehd2(a, bal.ilo, bal.ihi, taus.data());
  z = Orghr(a, taus.data(), bal.ilo, bal.ihi);
  t = HessenbergPart(a);
  ev.w.assign(static_cast<size_t>(n), cd(0));
  for (int64_t i = 0; i < n; ++i) {
    if (i < bal.ilo || i > bal.ihi) ev.w[i] = t(i, i);
  }
  const int32_t info = n == 0 ? 0 : Zlahqr(t, z, bal.ilo + 1, bal.ihi + 1, ev.w.data());
  for (int64_t i = 2; i < n; ++i) {
    for (int64_t j = 0; j + 1 < i; ++j) t(i, j) = 0;
  }
  return info;
}

int32_t Schur(Square<double>& a, const Balance& bal, Square<double>& t, Square<double>& z, Eigenvalues& ev) {
  const int64_t n = a.n;
  std::vector<double> taus(static_cast<size_t>(std::max<int64_t>(n - 1, 0)));
  Gehd2(a, bal.ilo, bal.ihi, taus.data());
  z = Orghr(a, taus.data(), bal.ilo, bal.ihi);
  t = HessenbergPart(a);
  ev.wr.assign(static_cast<size_t>(n), 0.0);
  ev.wi.assign(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    if (i < bal.ilo || i > bal.ihi) ev.wr[i] = t(i, i);
  }
  const int32_t info = n == 0 ? 0 : Dlahqr(t, z, bal.ilo + 1, bal.ihi + 1, ev.wr.data(), ev.wi.data());
  for (int64_t i = 2; i < n; ++i) {
    for (int64_t j = 0; j + 1 < i; ++j) t(i, j) = 0;
  }
  return info;
}

// ---- eigenvectors (trevc) ----

// smlnum of trevc.
double TrevcSmallNum(int64_t n) { return kSafeMin * (static_cast<double>(n) / kUlp); }

// x = b / d with d raised to smin when smaller (|re| + |im|), as trevc's solves do.
cd DivideRaised(cd b, cd d, double smin) { return b / (Abs1(d) < smin ? cd(smin) : d); }

// The 2x2 solve of dlaln2 in complex arithmetic: (m - lambda I) x = b, complete pivoting, pivots below smin raised.
void Solve2x2(double m11, double m12, double m21, double m22, cd lambda, const cd b[2], double smin, cd x[2]) {
  // Column-major as dlaln2's CRV: (1,1), (2,1), (1,2), (2,2).
  const cd c[4] = {m11 - lambda, cd(m21), cd(m12), m22 - lambda};
  static constexpr int kPivot[4][4] = {{0, 1, 2, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0}};
  static constexpr bool kRowSwap[4] = {false, true, false, true};
  static constexpr bool kColumnSwap[4] = {false, false, true, true};
  int icmax = 0;
  double cmax = 0;
  for (int j = 0; j < 4; ++j) {
    if (Abs1(c[j]) > cmax) {
      cmax = Abs1(c[j]);
      icmax = j;
    }
  }
  if (cmax < smin) {
    x[0] = b[0] / smin;
    x[1] = b[1] / smin;
    return;
  }
  const cd u11 = c[icmax], c21 = c[kPivot[icmax][1]], u12 = c[kPivot[icmax][2]], c22 = c[kPivot[icmax][3]];
  const cd l21 = c21 / u11;
  cd u22 = c22 - u12 * l21;
  if (Abs1(u22) < smin) u22 = smin;
  cd b1 = kRowSwap[icmax] ? b[1] : b[0], b2 = kRowSwap[icmax] ? b[0] : b[1];
  b2 -= l21 * b1;
  const cd x2 = b2 / u22, x1 = (b1 - u12 * x2) / u11;
  x[0] = kColumnSwap[icmax] ? x2 : x1;
  x[1] = kColumnSwap[icmax] ? x1 : x2;
}

// The right (left = false) or left eigenvectors of the complex upper triangular t, back-transformed by z (ztrevc
// with back-transformation): columns of the result.
Square<cd> Eigenvectors(const Square<cd>& t, const Square<cd>& z, bool left) {
  const int64_t n = t.n;
  Square<cd> out(n);
  std::vector<cd> x(static_cast<size_t>(n));
  const double smlnum = TrevcSmallNum(n);
  for (int64_t ki = 0; ki < n; ++ki) {
    const cd lambda = t(ki, ki);
    const double smin = std::max(kUlp * Abs1(lambda), smlnum);
    std::fill(x.begin(), x.end(), cd(0));
    x[ki] = 1;
    if (!left) {
      // (T - lambda) x = 0, x[ki] = 1: back-substitution upward.
      for (int64_t k = 0; k < ki; ++k) x[k] = -t(k, ki);
      for (int64_t j = ki - 1; j >= 0; --j) {
        x[j] = DivideRaised(x[j], t(j, j) - lambda, smin);
        for (int64_t k = 0; k < j; ++k) x[k] -= t(k, j) * x[j];
      }
      for (int64_t r = 0; r < n; ++r) {
        cd s = 0;
        for (int64_t k = 0; k <= ki; ++k) s += z(r, k) * x[k];
        out(r, ki) = s;
      }
    } else {
      // (T - lambda)^H y = 0, y[ki] = 1: forward substitution.
      for (int64_t k = ki + 1; k < n; ++k) x[k] = -std::conj(t(ki, k));
      for (int64_t j = ki + 1; j < n; ++j) {
        x[j] = DivideRaised(x[j], std::conj(t(j, j) - lambda), smin);
        for (int64_t k = j + 1; k < n; ++k) x[k] -= std::conj(t(j, k)) * x[j];
      }
      for (int64_t r = 0; r < n; ++r) {
        cd s = 0;
        for (int64_t k = ki; k < n; ++k) s += z(r, k) * x[k];
        out(r, ki) = s;
      }
    }
  }
  return out;
}

// The same for the real quasi-triangular t (dtrevc), in complex arithmetic: column j of the result is the complex
// eigenvector of eigenvalue j (real for a real eigenvalue; for a pair, the second is the first's conjugate).
Square<cd> Eigenvectors(const Square<double>& t, const Square<double>& z, bool left) {
  const int64_t n = t.n;
  Square<cd> out(n);
  std::vector<cd> x(static_cast<size_t>(n));
  const double smlnum = TrevcSmallNum(n);
  // Whether rows j and j+1 form a 2x2 block.
  auto pair_at = [&](int64_t j) { return j + 1 < n && t(j + 1, j) != 0; };
  for (int64_t ki = 0; ki < n; ++ki) {
    if (ki > 0 && pair_at(ki - 1)) continue;  // the second of a pair, done with the first
    const bool pair = pair_at(ki);
    const int64_t p = ki, q = pair ? ki + 1 : ki;  // the block's rows
    const double wr = t(p, p);
    const double wi = pair ? std::sqrt(std::fabs(t(q, p))) * std::sqrt(std::fabs(t(p, q))) : 0;
    const double smin = std::max(kUlp * (std::fabs(wr) + std::fabs(wi)), smlnum);
    std::fill(x.begin(), x.end(), cd(0));
    if (!left) {
      // (T - (wr + i wi)) x = 0 with dtrevc's start at the block (x[q] = 1 for a real eigenvalue).
      const cd lambda(wr, wi);
      if (!pair) {
        x[q] = 1;
      } else if (std::fabs(t(p, q)) >= std::fabs(t(q, p))) {
        x[p] = 1;
        x[q] = cd(0, wi / t(p, q));
      } else {
        x[p] = -wi / t(q, p);
        x[q] = cd(0, 1);
      }
      for (int64_t k = 0; k < p; ++k) x[k] = -(t(k, p) * x[p] + (pair ? t(k, q) * x[q] : cd(0)));
      for (int64_t j = p - 1; j >= 0;) {
        if (j > 0 && t(j, j - 1) != 0) {
          cd sol[2];
          const cd rhs[2] = {x[j - 1], x[j]};
          Solve2x2(t(j - 1, j - 1), t(j - 1, j), t(j, j - 1), t(j, j), lambda, rhs, smin, sol);
          x[j - 1] = sol[0];
          x[j] = sol[1];
          for (int64_t k = 0; k < j - 1; ++k) x[k] -= t(k, j - 1) * x[j - 1] + t(k, j) * x[j];
          j -= 2;
        } else {
          x[j] = DivideRaised(x[j], t(j, j) - lambda, smin);
          for (int64_t k = 0; k < j; ++k) x[k] -= t(k, j) * x[j];
          j -= 1;
        }
      }
      for (int64_t r = 0; r < n; ++r) {
        cd s = 0;
        for (int64_t k = 0; k <= q; ++k) s += z(r, k) * x[k];
        out(r, p) = pair ? s : cd(s.real());
        if (pair) out(r, q) = std::conj(s);
      }
    } else {
      // (T - (wr - i wi))^T y = 0 (y^H A = (wr + i wi) y^H for u = Z y).
      const cd mu(wr, -wi);
      if (!pair) {
        x[p] = 1;
      } else if (std::fabs(t(p, q)) >= std::fabs(t(q, p))) {
        x[p] = wi / t(p, q);
        x[q] = cd(0, 1);
      } else {
        x[p] = 1;
        x[q] = cd(0, -wi / t(q, p));
      }
      for (int64_t k = q + 1; k < n; ++k) x[k] = -(t(p, k) * x[p] + (pair ? t(q, k) * x[q] : cd(0)));
      for (int64_t j = q + 1; j < n;) {
        if (pair_at(j)) {
          cd sol[2];
          const cd rhs[2] = {x[j], x[j + 1]};
          Solve2x2(t(j, j), t(j + 1, j), t(j, j + 1), t(j + 1, j + 1), mu, rhs, smin, sol);
          x[j] = sol[0];
          x[j + 1] = sol[1];
          for (int64_t k = j + 2; k < n; ++k) x[k] -= t(j, k) * x[j] + t(j + 1, k) * x[j + 1];
          j += 2;
        } else {
          x[j] = DivideRaised(x[j], t(j, j) - mu, smin);
          for (int64_t k = j + 1; k < n; ++k) x[k] -= t(j, k) * x[j];
          j += 1;
        }
      }
      for (int64_t r = 0; r < n; ++r) {
        cd s = 0;
        for (int64_t k = p; k < n; ++k) s += z(r, k) * x[k];
        out(r, p) = pair ? s : cd(s.real());
        if (pair) out(r, q) = std::conj(s);
      }
    }
  }
  return out;
}

// geev's normalization of the eigenvector columns of v: unit 2-norm, then the component of largest modulus (the
// first of ties) made real: positive (zgeev), or for a real matrix's complex pair with the sign of its real part
// (dgeev's dlartg rotation, its conjugate following). `pair_second[j]`: column j is the conjugate of column j-1.
void Normalize(Square<cd>& v, bool real_matrix, const std::vector<bool>& pair_second) {
  const int64_t n = v.n;
  for (int64_t j = 0; j < n; ++j) {
    if (real_matrix && pair_second[static_cast<size_t>(j)]) {
      for (int64_t i = 0; i < n; ++i) v(i, j) = std::conj(v(i, j - 1));
      continue;
    }
    const double norm = Nrm2(&v(0, j), n, n);
    if (norm == 0) continue;
    const double inverse = 1 / norm;
    for (int64_t i = 0; i < n; ++i) v(i, j) *= inverse;
    const bool complex_vector = !real_matrix || (j + 1 < n && pair_second[static_cast<size_t>(j + 1)]);
    if (!complex_vector) continue;
    int64_t k = 0;
    double best = -1;
    for (int64_t i = 0; i < n; ++i) {
      const double m = v(i, j).real() * v(i, j).real() + v(i, j).imag() * v(i, j).imag();
      if (m > best) {
        best = m;
        k = i;
      }
    }
    const cd vk = v(k, j);
    if (vk == cd(0)) continue;
    cd phase = std::conj(vk) / std::abs(vk);
    if (real_matrix && vk.real() < 0) phase = -phase;
    for (int64_t i = 0; i < n; ++i) v(i, j) *= phase;
    v(k, j) = v(k, j).real();
  }
}

// Loads batch b of a (n x n) as S.
template <typename S>
Square<S> LoadMatrix(const std::vector<cd>& in, int64_t b, int64_t n) {
  Square<S> a(n);
  for (int64_t i = 0; i < n * n; ++i) {
    if constexpr (std::is_same_v<S, double>) {
      a.v[i] = in[b * n * n + i].real();
    } else {
      a.v[i] = in[b * n * n + i];
    }
  }
  return a;
}

template <typename S>
void StoreMatrix(const Square<S>& a, std::vector<cd>& out, int64_t b) {
  for (int64_t i = 0; i < a.n * a.n; ++i) out[b * a.n * a.n + i] = a.v[i];
}

// ---- the kernels ----

template <typename T>
void Hessenberg(const void* a, void* out, void* taus, int64_t batches, int64_t n, int32_t low, int32_t high) {
  const int64_t k = std::max<int64_t>(n - 1, 0);
  std::vector<cd> in = Load<T>(a, batches * n * n), packed(in.size()), tv(static_cast<size_t>(batches * k));
  for (int64_t b = 0; b < batches; ++b) {
    Square<cd> m = LoadMatrix<cd>(in, b, n);
    Gehd2(m, std::max<int64_t>(low, 1) - 1, std::min<int64_t>(high, n) - 1, tv.data() + b * k);
    StoreMatrix(m, packed, b);
  }
  if (out != nullptr) Store<T>(out, packed);
  if (taus != nullptr) Store<T>(taus, tv);
}

template <typename T>
void Eig(const void* a, void* w, void* wi, void* vl, void* vr, int32_t* info, int64_t batches, int64_t n,
         bool compute_left, bool compute_right) {
  using S = std::conditional_t<std::is_same_v<T, C64> || std::is_same_v<T, C128>, cd, double>;
  constexpr bool kReal = std::is_same_v<S, double>;
  std::vector<cd> in = Load<T>(a, batches * n * n);
  std::vector<cd> out_w(static_cast<size_t>(batches * n)), out_wi(out_w.size());
  std::vector<cd> out_vl(static_cast<size_t>(batches * n * n)), out_vr(out_vl.size());
  for (int64_t b = 0; b < batches; ++b) {
    int32_t status = AllFinite(in, b * n * n, n * n) ? 0 : -4;
    Square<S> t(n), z(n);
    Eigenvalues ev;
    Balance bal;
    if (status == 0) {
      Square<S> m = LoadMatrix<S>(in, b, n);
      bal = Gebal(m, /*scale=*/true);
      status = Schur(m, bal, t, z, ev);
    }
    if (status != 0) {
      std::fill_n(out_w.begin() + b * n, n, cd(kNaN, kReal ? 0 : kNaN));
      std::fill_n(out_wi.begin() + b * n, n, cd(kNaN));
      if (compute_left) std::fill_n(out_vl.begin() + b * n * n, n * n, cd(kNaN, kNaN));
      if (compute_right) std::fill_n(out_vr.begin() + b * n * n, n * n, cd(kNaN, kNaN));
      if (info != nullptr) info[b] = status;
      continue;
    }
    std::vector<bool> pair_second(static_cast<size_t>(n), false);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (kReal) {
        out_w[b * n + i] = ev.wr[i];
        out_wi[b * n + i] = ev.wi[i];
        pair_second[static_cast<size_t>(i)] = ev.wi[i] < 0;
      } else {
        out_w[b * n + i] = ev.w[i];
      }
    }
    for (bool left : {false, true}) {
      if (!(left ? compute_left : compute_right)) continue;
      Square<cd> v = Eigenvectors(t, z, left);
      Gebak(bal, left, v);
      Normalize(v, kReal, pair_second);
      StoreMatrix(v, left ? out_vl : out_vr, b);
    }
    if (info != nullptr) info[b] = 0;
  }
  if (w != nullptr) Store<T>(w, out_w);
  if (kReal && wi != nullptr) Store<T>(wi, out_wi);
  using Complex = typename ComplexOf<T>::Type;
  if (vl != nullptr) Store<Complex>(vl, out_vl);
  if (vr != nullptr) Store<Complex>(vr, out_vr);
}

template <typename T>
void SchurKernel(const void* a, void* t_out, void* vectors, void* w, void* wi, int32_t* info, int64_t batches,
                 int64_t n) {
  using S = std::conditional_t<std::is_same_v<T, C64> || std::is_same_v<T, C128>, cd, double>;
  constexpr bool kReal = std::is_same_v<S, double>;
  std::vector<cd> in = Load<T>(a, batches * n * n);
  std::vector<cd> out_t(in.size()), out_z(in.size());
  std::vector<cd> out_w(static_cast<size_t>(batches * n)), out_wi(out_w.size());
  for (int64_t b = 0; b < batches; ++b) {
    int32_t status = AllFinite(in, b * n * n, n * n) ? 0 : -4;
    Square<S> t(n), z(n);
    Eigenvalues ev;
    if (status == 0) {
      Square<S> m = LoadMatrix<S>(in, b, n);
      const Balance bal = Gebal(m, /*scale=*/false);
      status = Schur(m, bal, t, z, ev);
      Gebak(bal, /*left=*/false, z);
    }
    if (info != nullptr) info[b] = status;
    if (status != 0) {
      std::fill_n(out_t.begin() + b * n * n, n * n, cd(kNaN, kReal ? 0 : kNaN));
      std::fill_n(out_z.begin() + b * n * n, n * n, cd(kNaN, kReal ? 0 : kNaN));
      std::fill_n(out_w.begin() + b * n, n, cd(kNaN, kReal ? 0 : kNaN));
      std::fill_n(out_wi.begin() + b * n, n, cd(kNaN));
      continue;
    }
    StoreMatrix(t, out_t, b);
    StoreMatrix(z, out_z, b);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (kReal) {
        out_w[b * n + i] = ev.wr[i];
        out_wi[b * n + i] = ev.wi[i];
      } else {
        out_w[b * n + i] = ev.w[i];
      }
    }
  }
  if (t_out != nullptr) Store<T>(t_out, out_t);
  if (vectors != nullptr) Store<T>(vectors, out_z);
  if (w != nullptr) Store<T>(w, out_w);
  if (kReal && wi != nullptr) Store<T>(wi, out_wi);
}

}  // namespace

#define XLAC_RT_HESSENBERG_KERNEL(suffix, T)                                                                      \
  void xlac_rt_hessenberg_##suffix(const void* a, void* out, void* taus, int64_t batches, int64_t n, int32_t low, \
                                   int32_t high) {                                                                \
    Hessenberg<T>(a, out, taus, batches, n, low, high);                                                           \
  }

#define XLAC_RT_EIGEN_KERNELS(suffix, T)                                                                          \
  void xlac_rt_eig_##suffix(const void* a, void* w, void* wi, void* vl, void* vr, int32_t* info, int64_t batches, \
                            int64_t n, int32_t compute_left, int32_t compute_right) {                             \
    Eig<T>(a, w, wi, vl, vr, info, batches, n, compute_left != 0, compute_right != 0);                            \
  }                                                                                                               \
  void xlac_rt_schur_##suffix(const void* a, void* t, void* vectors, void* w, void* wi, int32_t* info,            \
                              int64_t batches, int64_t n) {                                                       \
    SchurKernel<T>(a, t, vectors, w, wi, info, batches, n);                                                       \
  }

extern "C" {
XLAC_RT_HESSENBERG_KERNEL(f32, F32)
XLAC_RT_HESSENBERG_KERNEL(f64, F64)
XLAC_RT_HESSENBERG_KERNEL(c64, C64)
XLAC_RT_HESSENBERG_KERNEL(c128, C128)
XLAC_RT_HESSENBERG_KERNEL(bf16, Half<kBF16>)
XLAC_RT_HESSENBERG_KERNEL(f16, Half<kF16>)
XLAC_RT_EIGEN_KERNELS(f32, F32)
XLAC_RT_EIGEN_KERNELS(f64, F64)
XLAC_RT_EIGEN_KERNELS(c64, C64)
XLAC_RT_EIGEN_KERNELS(c128, C128)
}  // extern "C"
