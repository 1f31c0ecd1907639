// Nonsymmetric eigenproblems shared by compiled code and the interpreter (xlac_runtime_kernels.h): the Hessenberg
// reduction (gehrd), the Schur decomposition (gees) and eigenvalues with left and right eigenvectors (geev).
//
// Every routine is LAPACK's unblocked one, followed step for step in double precision (complex<double> for complex
// types), and the results are rounded once to the element type:
//   gebal   balancing: permutations isolating eigenvalues, then (geev) diagonal scaling by powers of 2;
//   gehd2   Householder reduction to upper Hessenberg form (larfg's reflectors), orghr / unghr its Q;
//   lahqr   the QR iteration hseqr runs on small matrices (lahqr.cc): zlahqr's single shift with Wilkinson's shift
//           for complex types, dlahqr's Francis double shift for real types with dlanv2's standardized 2x2 blocks
//           (equal diagonal, off-diagonals of opposite signs) for complex-conjugate pairs; the Ahues-Kressner deflation
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
#include "runtime/cpu/schur_internal.h"
#include "runtime/cpu/xlac_runtime_kernels.h"

namespace {

using namespace xlac_rt_linalg;  // NOLINT: the element structs name the kernels' suffixes
using namespace xlac_rt_schur;   // NOLINT: the shared helpers and the QR iteration

constexpr double kNaN = NAN;

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
