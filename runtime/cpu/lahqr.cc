// LAPACK's QR iteration on a Hessenberg matrix, as hseqr runs it on small matrices (schur_internal.h): zlahqr's
// single shift for complex types, dlahqr's Francis double shift with dlanv2's standardized 2x2 blocks for real
// types. Followed line by line, with LAPACK's 1-based indices.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>

#include "runtime/cpu/schur_internal.h"

namespace xlac_rt_schur {
namespace {

constexpr int64_t kExceptionalShift = 10;  // lahqr's KEXSH

// drot on two vectors of `count` elements: (x, y) = (cs x + sn y, cs y - sn x).
void Rot(double* x, int64_t xstride, double* y, int64_t ystride, int64_t count, double cs, double sn) {
  for (int64_t i = 0; i < count; ++i) {
    const double t = cs * x[i * xstride] + sn * y[i * ystride];
    y[i * ystride] = cs * y[i * ystride] - sn * x[i * xstride];
    x[i * xstride] = t;
  }
}

}  // namespace

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

}  // namespace xlac_rt_schur
