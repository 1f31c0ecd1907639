// Matrix decompositions shared by compiled code and the interpreter (xlac_runtime_kernels.h): LU with partial
// pivoting, Householder QR and the product of its reflectors, the Hermitian eigendecomposition and the SVD, the
// tridiagonal solve (gtsv) and the reduction of a Hermitian matrix to tridiagonal form (sytrd / hetrd). The
// nonsymmetric eigenproblems (Hessenberg, Schur, eig) are in schur.cc.
//
// As in linalg.cc, every element type is computed in complex<double> and rounded once. LU and QR follow LAPACK's
// unblocked algorithms step for step (getf2's pivot choice, larfg's reflectors), so pivots, signs and the meaning
// of every output are LAPACK's; only the last bits differ from a blocked LAPACK. So do gtsv and sytd2 / hetd2. The
// eigendecomposition and the SVD use Jacobi rotations (cyclic two-sided for eigh, one-sided for the SVD): slower than
// LAPACK's divide and conquer for large matrices, but accurate to a few ulps of double, which is far below the f32
// rounding of the results. Eigenvectors and singular vectors are unique only up to a phase per vector (and a basis per
// repeated value): callers compare reconstructions, never the vectors, as LAPACK's own tests do.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numeric>
#include <vector>

#include "runtime/cpu/linalg_elements.h"
#include "runtime/cpu/xlac_runtime_kernels.h"

namespace {

using namespace xlac_rt_linalg;  // NOLINT: the element structs name the kernels' suffixes

constexpr double kNaN = NAN;

// LAPACK's pivot measure for complex values (i?amax uses |re| + |im|).
double Abs1(cd v) { return std::fabs(v.real()) + std::fabs(v.imag()); }

bool AllFinite(const cd* v, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(v[i].real()) || !std::isfinite(v[i].imag())) return false;
  }
  return true;
}

// sqrt(sum |x_i|^2) without overflow or underflow for any finite x (LAPACK's nrm2 idea: scale by the largest).
double Norm(const cd* x, int64_t count, int64_t stride) {
  double scale = 0;
  for (int64_t i = 0; i < count; ++i)
    scale = std::max({scale, std::fabs(x[i * stride].real()), std::fabs(x[i * stride].imag())});
  if (scale == 0 || !std::isfinite(scale)) return scale;
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) sum += std::norm(x[i * stride] / scale);
  return scale * std::sqrt(sum);
}

// ---- LU ----

template <typename T>
void Lu(const void* a, void* lu, int32_t* pivots, int32_t* permutation, int32_t* info, int64_t batches, int64_t m,
        int64_t n) {
  const int64_t k = std::min(m, n);
  std::vector<cd> v = Load<T>(a, batches * m * n);
  std::vector<int32_t> perm(static_cast<size_t>(m));
  for (int64_t b = 0; b < batches; ++b) {
    cd* x = v.data() + b * m * n;
    std::iota(perm.begin(), perm.end(), 0);
    int32_t first_zero = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t p = j;
      double best = Abs1(x[j * n + j]);
      for (int64_t i = j + 1; i < m; ++i) {
        if (Abs1(x[i * n + j]) > best) {
          best = Abs1(x[i * n + j]);
          p = i;
        }
      }
      if (pivots != nullptr) pivots[b * k + j] = static_cast<int32_t>(p);
      std::swap(perm[static_cast<size_t>(j)], perm[static_cast<size_t>(p)]);
      if (p != j) std::swap_ranges(x + j * n, x + (j + 1) * n, x + p * n);
      const cd d = x[j * n + j];
      if (d == cd(0)) {
        // The whole column below is zero as well: nothing to eliminate (getf2 records the first such step).
        if (first_zero == 0) first_zero = static_cast<int32_t>(j + 1);
        continue;
      }
      for (int64_t i = j + 1; i < m; ++i) {
        const cd l = x[i * n + j] / d;
        x[i * n + j] = l;
        for (int64_t c = j + 1; c < n; ++c) x[i * n + c] -= l * x[j * n + c];
      }
    }
    if (permutation != nullptr) std::copy(perm.begin(), perm.end(), permutation + b * m);
    if (info != nullptr) info[b] = first_zero;
  }
  Store<T>(lu, v);
}

// ---- QR ----

// LAPACK's larfg: turns (alpha, x) into (beta, v) with H^H (alpha; x) = (beta; 0), H = I - tau (1; v)(1; v)^H, beta
// real. Returns tau (0: H = I).
cd Reflector(cd* alpha, cd* x, int64_t count, int64_t stride) {
  const double xnorm = Norm(x, count, stride);
  const double ar = alpha->real(), ai = alpha->imag();
  if (xnorm == 0 && ai == 0) return 0;
  const double beta = -std::copysign(std::hypot(std::hypot(ar, ai), xnorm), ar);
  const cd tau((beta - ar) / beta, -ai / beta);
  const cd scale = 1.0 / (*alpha - beta);
  for (int64_t i = 0; i < count; ++i) x[i * stride] *= scale;
  *alpha = beta;
  return tau;
}

template <typename T>
void Qr(const void* a, void* r, void* taus, int64_t batches, int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  std::vector<cd> v = Load<T>(a, batches * m * n), t(static_cast<size_t>(batches * k), cd(0));
  for (int64_t b = 0; b < batches; ++b) {
    cd* x = v.data() + b * m * n;
    for (int64_t i = 0; i < k; ++i) {
      const cd tau = Reflector(&x[i * n + i], &x[(i + 1) * n + i], m - i - 1, n);
      t[b * k + i] = tau;
      if (tau == cd(0)) continue;
      // A[i:, i+1:] -= conj(tau) v (v^H A[i:, i+1:]), v = (1; x[i+1:, i]): H^H from the left, as geqr2.
      for (int64_t c = i + 1; c < n; ++c) {
        cd w = x[i * n + c];
        for (int64_t row = i + 1; row < m; ++row) w += std::conj(x[row * n + i]) * x[row * n + c];
        w *= std::conj(tau);
        x[i * n + c] -= w;
        for (int64_t row = i + 1; row < m; ++row) x[row * n + c] -= x[row * n + i] * w;
      }
    }
  }
  Store<T>(r, v);
  Store<T>(taus, t);
}

// Q = H_0 H_1 ... H_{k-1}, its first n columns, with H_i = I - tau_i v_i v_i^H and v_i in column i of `a` below the
// diagonal (v_i[i] = 1): LAPACK's orgqr / ungqr.
template <typename T>
void HouseholderProduct(const void* a, const void* taus, void* q, int64_t batches, int64_t m, int64_t n, int64_t k) {
  std::vector<cd> av = Load<T>(a, batches * m * n), tv = Load<T>(taus, batches * k);
  std::vector<cd> out(static_cast<size_t>(batches * m * n), cd(0));
  for (int64_t b = 0; b < batches; ++b) {
    const cd* x = av.data() + b * m * n;
    cd* y = out.data() + b * m * n;
    for (int64_t i = 0; i < std::min(m, n); ++i) y[i * n + i] = 1;
    for (int64_t i = std::min(k, std::min(m, n)) - 1; i >= 0; --i) {
      const cd tau = tv[b * k + i];
      if (tau == cd(0)) continue;
      for (int64_t c = 0; c < n; ++c) {
        cd w = y[i * n + c];
        for (int64_t row = i + 1; row < m; ++row) w += std::conj(x[row * n + i]) * y[row * n + c];
        w *= tau;
        y[i * n + c] -= w;
        for (int64_t row = i + 1; row < m; ++row) y[row * n + c] -= x[row * n + i] * w;
      }
    }
  }
  Store<T>(q, out);
}

// ---- Jacobi rotations ----

// The unitary 2x2 rotation that diagonalizes the Hermitian [[app, g], [conj(g), aqq]] (app, aqq real, g != 0):
// columns p, q of X become (c X_p - s d X_q, s X_p + c d X_q).
struct Rotation {
  double c, s;
  cd d;
};

Rotation JacobiRotation(double app, double aqq, cd g) {
  const double r = std::abs(g);
  const double theta = (aqq - app) / (2 * r);
  // t = sign(theta) / (|theta| + sqrt(theta^2 + 1)), the smaller root, written to avoid overflow for large theta.
  const double t =
      std::fabs(theta) > 1e150 ? 0.5 / theta : std::copysign(1.0, theta) / (std::fabs(theta) + std::hypot(theta, 1.0));
  const double c = 1 / std::hypot(t, 1.0);
  return {c, t * c, std::conj(g / r)};
}

// Columns p and q of the row-major rows x cols matrix x, times the rotation.
void RotateColumns(cd* x, int64_t rows, int64_t cols, int64_t p, int64_t q, const Rotation& rot) {
  for (int64_t i = 0; i < rows; ++i) {
    const cd xp = x[i * cols + p], xq = x[i * cols + q];
    x[i * cols + p] = rot.c * xp - rot.s * rot.d * xq;
    x[i * cols + q] = rot.s * xp + rot.c * rot.d * xq;
  }
}

// ---- Hermitian eigendecomposition ----

// `h` (n x n, Hermitian) becomes diagonal; `vectors` accumulates the rotations. Returns false when the sweeps ran out.
bool JacobiEigen(std::vector<cd>& h, std::vector<cd>& vectors, int64_t n) {
  vectors.assign(static_cast<size_t>(n * n), cd(0));
  for (int64_t i = 0; i < n; ++i) vectors[i * n + i] = 1;
  for (int sweep = 0; sweep < 64; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        const cd g = h[p * n + q];
        const double app = h[p * n + p].real(), aqq = h[q * n + q].real();
        if (std::abs(g) <= DBL_EPSILON * 0.5 * std::sqrt(std::fabs(app) * std::fabs(aqq)) || std::abs(g) < DBL_MIN) {
          h[p * n + q] = h[q * n + p] = 0;
          continue;
        }
        rotated = true;
        const Rotation rot = JacobiRotation(app, aqq, g);
        RotateColumns(h.data(), n, n, p, q, rot);  // H U
        for (int64_t j = 0; j < n; ++j) {          // U^H (H U)
          const cd hp = h[p * n + j], hq = h[q * n + j];
          h[p * n + j] = rot.c * hp - rot.s * std::conj(rot.d) * hq;
          h[q * n + j] = rot.s * hp + rot.c * std::conj(rot.d) * hq;
        }
        h[p * n + q] = h[q * n + p] = 0;
        h[p * n + p] = h[p * n + p].real();
        h[q * n + q] = h[q * n + q].real();
        RotateColumns(vectors.data(), n, n, p, q, rot);
      }
    }
    if (!rotated) return true;
  }
  return false;
}

template <typename T>
void Eigh(const void* a, void* vectors, void* values, int32_t* info, int64_t batches, int64_t n, bool lower,
          bool sort) {
  std::vector<cd> in = Load<T>(a, batches * n * n);
  std::vector<cd> out_vectors(in.size()), out_values(static_cast<size_t>(batches * n));
  std::vector<cd> h(static_cast<size_t>(n * n)), v;
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t b = 0; b < batches; ++b) {
    const cd* x = in.data() + b * n * n;
    // The Hermitian matrix the named triangle defines; the diagonal's imaginary parts are ignored, as LAPACK does.
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const bool stored = lower ? i >= j : i <= j;
        h[i * n + j] = i == j ? cd(x[i * n + i].real()) : stored ? x[i * n + j] : std::conj(x[j * n + i]);
      }
    }
    bool ok = AllFinite(h.data(), n * n) && JacobiEigen(h, v, n);
    if (info != nullptr) info[b] = ok ? 0 : 1;
    if (!ok) {
      std::fill_n(out_vectors.begin() + b * n * n, n * n, cd(kNaN, kNaN));
      std::fill_n(out_values.begin() + b * n, n, cd(kNaN));
      continue;
    }
    std::iota(order.begin(), order.end(), 0);
    if (sort) {
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t i, int64_t j) { return h[i * n + i].real() < h[j * n + j].real(); });
    }
    for (int64_t j = 0; j < n; ++j) {
      const int64_t src = order[static_cast<size_t>(j)];
      out_values[b * n + j] = h[src * n + src].real();
      for (int64_t i = 0; i < n; ++i) out_vectors[b * n * n + i * n + j] = v[i * n + src];
    }
  }
  Store<T>(vectors, out_vectors);
  Store<typename T::Real>(values, out_values);
}

// ---- SVD ----

// Extends the orthonormal columns `basis` (each of length m) to `want` columns, each time with the unit vector that
// keeps the most after projecting out the basis (two passes of Gram-Schmidt).
void CompleteBasis(std::vector<std::vector<cd>>& basis, int64_t m, size_t want) {
  auto residual = [&](int64_t unit) {
    std::vector<cd> r(static_cast<size_t>(m), cd(0));
    r[static_cast<size_t>(unit)] = 1;
    for (int pass = 0; pass < 2; ++pass) {
      for (const std::vector<cd>& u : basis) {
        cd dot = 0;
        for (int64_t i = 0; i < m; ++i) dot += std::conj(u[i]) * r[i];
        for (int64_t i = 0; i < m; ++i) r[i] -= u[i] * dot;
      }
    }
    return r;
  };
  while (basis.size() < want) {
    std::vector<cd> best;
    double best_norm = -1;
    for (int64_t unit = 0; unit < m; ++unit) {
      std::vector<cd> r = residual(unit);
      const double norm = Norm(r.data(), m, 1);
      if (norm > best_norm) {
        best_norm = norm;
        best = std::move(r);
      }
    }
    for (cd& e : best) e /= best_norm;
    basis.push_back(std::move(best));
  }
}

// One-sided Jacobi on the columns of w (rows x cols, rows >= cols): w becomes U Sigma, v the accumulated rotations.
bool JacobiSvd(std::vector<cd>& w, std::vector<cd>& v, int64_t rows, int64_t cols) {
  v.assign(static_cast<size_t>(cols * cols), cd(0));
  for (int64_t i = 0; i < cols; ++i) v[i * cols + i] = 1;
  for (int sweep = 0; sweep < 64; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < cols; ++p) {
      for (int64_t q = p + 1; q < cols; ++q) {
        double alpha = 0, beta = 0;
        cd gamma = 0;
        for (int64_t i = 0; i < rows; ++i) {
          alpha += std::norm(w[i * cols + p]);
          beta += std::norm(w[i * cols + q]);
          gamma += std::conj(w[i * cols + p]) * w[i * cols + q];
        }
        if (std::abs(gamma) <= DBL_EPSILON * 0.5 * std::sqrt(alpha * beta) || std::abs(gamma) < DBL_MIN) continue;
        rotated = true;
        const Rotation rot = JacobiRotation(alpha, beta, gamma);
        RotateColumns(w.data(), rows, cols, p, q, rot);
        RotateColumns(v.data(), cols, cols, p, q, rot);
      }
    }
    if (!rotated) return true;
  }
  return false;
}

template <typename T>
void Svd(const void* a, void* s, void* u, void* vt, int32_t* info, int64_t batches, int64_t m, int64_t n,
         bool full_matrices) {
  const int64_t k = std::min(m, n);
  const int64_t u_cols = full_matrices ? m : k, vt_rows = full_matrices ? n : k;
  const bool transposed = m < n;  // work on A^H, whose rows >= cols
  const int64_t rows = transposed ? n : m, cols = k;
  std::vector<cd> in = Load<T>(a, batches * m * n);
  std::vector<cd> out_s(static_cast<size_t>(batches * k)), out_u(static_cast<size_t>(batches * m * u_cols));
  std::vector<cd> out_vt(static_cast<size_t>(batches * vt_rows * n));
  std::vector<cd> w(static_cast<size_t>(rows * cols)), v;
  for (int64_t b = 0; b < batches; ++b) {
    const cd* x = in.data() + b * m * n;
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) w[i * cols + j] = transposed ? std::conj(x[j * n + i]) : x[i * n + j];
    }
    const bool ok = AllFinite(w.data(), rows * cols) && JacobiSvd(w, v, rows, cols);
    if (info != nullptr) info[b] = ok ? 0 : 1;
    if (!ok) {
      std::fill_n(out_s.begin() + b * k, k, cd(kNaN));
      std::fill_n(out_u.begin() + b * m * u_cols, m * u_cols, cd(kNaN, kNaN));
      std::fill_n(out_vt.begin() + b * vt_rows * n, vt_rows * n, cd(kNaN, kNaN));
      continue;
    }
    std::vector<double> sigma(static_cast<size_t>(cols));
    for (int64_t j = 0; j < cols; ++j) sigma[j] = Norm(w.data() + j, rows, cols);
    std::vector<int64_t> order(static_cast<size_t>(cols));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return sigma[i] > sigma[j]; });
    // Left vectors of the work matrix: its normalized columns, for the values that are not zero to working
    // precision; the rest, and the extra columns of a full basis, complete an orthonormal basis.
    const double negligible = (sigma.empty() ? 0 : sigma[order[0]]) * DBL_EPSILON * static_cast<double>(rows);
    std::vector<std::vector<cd>> left, right;
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t src = order[static_cast<size_t>(j)];
      out_s[b * k + j] = sigma[src];
      std::vector<cd> r(static_cast<size_t>(cols));
      for (int64_t i = 0; i < cols; ++i) r[i] = v[i * cols + src];
      right.push_back(std::move(r));
      if (sigma[src] > negligible && sigma[src] > 0) {
        std::vector<cd> l(static_cast<size_t>(rows));
        for (int64_t i = 0; i < rows; ++i) l[i] = w[i * cols + src] / sigma[src];
        left.push_back(std::move(l));
      }
    }
    CompleteBasis(left, rows, static_cast<size_t>(transposed ? (full_matrices ? n : k) : u_cols));
    // A = L Sigma R^H with L = left (rows x ...), R = right (cols x cols); for A^H the roles swap.
    const std::vector<std::vector<cd>>& uu = transposed ? right : left;  // columns of u
    const std::vector<std::vector<cd>>& vv = transposed ? left : right;  // columns of v (rows of vt, conjugated)
    for (int64_t j = 0; j < u_cols; ++j) {
      for (int64_t i = 0; i < m; ++i) out_u[b * m * u_cols + i * u_cols + j] = uu[j][i];
    }
    for (int64_t j = 0; j < vt_rows; ++j) {
      for (int64_t i = 0; i < n; ++i) out_vt[b * vt_rows * n + j * n + i] = std::conj(vv[j][i]);
    }
  }
  Store<typename T::Real>(s, out_s);
  if (u != nullptr) Store<T>(u, out_u);
  if (vt != nullptr) Store<T>(vt, out_vt);
}

// ---- tridiagonal solve ----

// LAPACK's gtsv step for step (zgtsv's structure, which real dgtsv follows for every finite input): elimination with
// row interchanges on the three diagonals, then back-substitution with U's three diagonals. l = DL(1..n-1) (jaxlib
// passes dl + 1), b row-major n x nrhs. Returns info (0, or the 1-based index of the first zero pivot: gtsv returns
// at once, leaving its partial state).
int32_t Gtsv(cd* l, cd* d, cd* u, cd* b, int64_t n, int64_t nrhs) {
  for (int64_t k = 0; k + 1 < n; ++k) {
    if (l[k] == cd(0)) {
      // Sub-diagonal zero: no elimination.
      if (d[k] == cd(0)) return static_cast<int32_t>(k + 1);
    } else if (Abs1(d[k]) >= Abs1(l[k])) {
      // No row interchange.
      const cd mult = l[k] / d[k];
      d[k + 1] -= mult * u[k];
      for (int64_t j = 0; j < nrhs; ++j) b[(k + 1) * nrhs + j] -= mult * b[k * nrhs + j];
      if (k + 2 < n) l[k] = 0;
    } else {
      // Interchange rows k and k + 1; l[k] becomes U's second super-diagonal.
      const cd mult = d[k] / l[k];
      d[k] = l[k];
      const cd temp = d[k + 1];
      d[k + 1] = u[k] - mult * temp;
      if (k + 2 < n) {
        l[k] = u[k + 1];
        u[k + 1] = -mult * l[k];
      }
      u[k] = temp;
      for (int64_t j = 0; j < nrhs; ++j) {
        const cd t = b[k * nrhs + j];
        b[k * nrhs + j] = b[(k + 1) * nrhs + j];
        b[(k + 1) * nrhs + j] = t - mult * b[(k + 1) * nrhs + j];
      }
    }
  }
  if (n > 0 && d[n - 1] == cd(0)) return static_cast<int32_t>(n);
  for (int64_t j = 0; j < nrhs && n > 0; ++j) {
    b[(n - 1) * nrhs + j] /= d[n - 1];
    if (n > 1) b[(n - 2) * nrhs + j] = (b[(n - 2) * nrhs + j] - u[n - 2] * b[(n - 1) * nrhs + j]) / d[n - 2];
    for (int64_t i = n - 3; i >= 0; --i) {
      b[i * nrhs + j] = (b[i * nrhs + j] - u[i] * b[(i + 1) * nrhs + j] - l[i] * b[(i + 2) * nrhs + j]) / d[i];
    }
  }
  return 0;
}

template <typename T>
void TridiagonalSolve(const void* dl_in, const void* d_in, const void* du_in, const void* b_in, void* dl_out,
                      void* d_out, void* du_out, void* x_out, int32_t* info, int64_t batches, int64_t n, int64_t nrhs) {
  std::vector<cd> dl = Load<T>(dl_in, batches * n), d = Load<T>(d_in, batches * n);
  std::vector<cd> du = Load<T>(du_in, batches * n), b = Load<T>(b_in, batches * n * nrhs);
  for (int64_t i = 0; i < batches; ++i) {
    const int32_t status =
        n == 0 ? 0 : Gtsv(dl.data() + i * n + 1, d.data() + i * n, du.data() + i * n, b.data() + i * n * nrhs, n, nrhs);
    if (info != nullptr) info[i] = status;
  }
  if (dl_out != nullptr) Store<T>(dl_out, dl);
  if (d_out != nullptr) Store<T>(d_out, d);
  if (du_out != nullptr) Store<T>(du_out, du);
  if (x_out != nullptr) Store<T>(x_out, b);
}

// ---- tridiagonal reduction ----

// One step of sytd2 / hetd2 on the Hermitian block h[lo..hi][lo..hi] (row stride n): H A H^H with H = I - tau v v^H,
// v indexed from lo: x = tau A v, w = x - tau / 2 (x^H v) v, A -= v w^H + w v^H.
void HermitianReflect(std::vector<cd>& h, int64_t n, int64_t lo, int64_t hi, const std::vector<cd>& v, cd tau) {
  const int64_t m = hi - lo + 1;
  std::vector<cd> w(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    cd s = 0;
    for (int64_t j = 0; j < m; ++j) s += h[(lo + i) * n + lo + j] * v[j];
    w[i] = tau * s;
  }
  cd dot = 0;
  for (int64_t i = 0; i < m; ++i) dot += std::conj(w[i]) * v[i];
  const cd alpha = -0.5 * tau * dot;
  for (int64_t i = 0; i < m; ++i) w[i] += alpha * v[i];
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      h[(lo + i) * n + lo + j] -= v[i] * std::conj(w[j]) + w[i] * std::conj(v[j]);
    }
    h[(lo + i) * n + lo + i] = h[(lo + i) * n + lo + i].real();
  }
}

template <typename T>
void TridiagonalReduction(const void* a, void* out, void* d_out, void* e_out, void* taus_out, int64_t batches,
                          int64_t n, bool lower) {
  const int64_t k = std::max<int64_t>(n - 1, 0);
  std::vector<cd> packed = Load<T>(a, batches * n * n);
  std::vector<cd> dv(static_cast<size_t>(batches * n)), ev(static_cast<size_t>(batches * k));
  std::vector<cd> tv(static_cast<size_t>(batches * k));
  std::vector<cd> h(static_cast<size_t>(n * n)), v;
  for (int64_t b = 0; b < batches; ++b) {
    cd* x = packed.data() + b * n * n;
    // The Hermitian matrix of the named triangle; its diagonal real, as hetd2 makes it.
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const bool stored = lower ? i >= j : i <= j;
        h[i * n + j] = i == j ? cd(x[i * n + i].real()) : stored ? x[i * n + j] : std::conj(x[j * n + i]);
      }
    }
    if (lower) {
      // Step i annihilates h[i+2:, i] with v = (1, h[i+2:, i] scaled) on rows i+1..n-1.
      for (int64_t i = 0; i + 1 < n; ++i) {
        cd alpha = h[(i + 1) * n + i];
        const cd tau = Reflector(&alpha, &h[std::min(i + 2, n - 1) * n + i], n - i - 2, n);
        v.assign(static_cast<size_t>(n - i - 1), cd(0));
        v[0] = 1;
        for (int64_t r = i + 2; r < n; ++r) v[r - i - 1] = h[r * n + i];
        if (tau != cd(0)) HermitianReflect(h, n, i + 1, n - 1, v, tau);
        for (int64_t r = i + 2; r < n; ++r) x[r * n + i] = v[r - i - 1];
        x[(i + 1) * n + i] = alpha.real();
        ev[b * k + i] = alpha.real();
        tv[b * k + i] = tau;
      }
    } else {
      // Step i (from n-2 down) annihilates h[0:i, i+1] with v = (h[0:i, i+1] scaled, 1) on rows 0..i.
      for (int64_t i = n - 2; i >= 0; --i) {
        cd alpha = h[i * n + i + 1];
        const cd tau = Reflector(&alpha, &h[i + 1], i, n);
        v.assign(static_cast<size_t>(i + 1), cd(0));
        v[i] = 1;
        for (int64_t r = 0; r < i; ++r) v[r] = h[r * n + i + 1];
        if (tau != cd(0)) HermitianReflect(h, n, 0, i, v, tau);
        for (int64_t r = 0; r < i; ++r) x[r * n + i + 1] = v[r];
        x[i * n + i + 1] = alpha.real();
        ev[b * k + i] = alpha.real();
        tv[b * k + i] = tau;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      dv[b * n + i] = h[i * n + i].real();
      x[i * n + i] = h[i * n + i].real();
    }
  }
  if (out != nullptr) Store<T>(out, packed);
  if (d_out != nullptr) Store<typename T::Real>(d_out, dv);
  if (e_out != nullptr) Store<typename T::Real>(e_out, ev);
  if (taus_out != nullptr) Store<T>(taus_out, tv);
}

}  // namespace

#define XLAC_RT_DECOMPOSITION_KERNELS(suffix, T)                                                                       \
  void xlac_rt_lu_##suffix(const void* a, void* lu, int32_t* pivots, int32_t* permutation, int32_t* info,              \
                           int64_t batches, int64_t m, int64_t n) {                                                    \
    Lu<T>(a, lu, pivots, permutation, info, batches, m, n);                                                            \
  }                                                                                                                    \
  void xlac_rt_qr_##suffix(const void* a, void* r, void* taus, int64_t batches, int64_t m, int64_t n) {                \
    Qr<T>(a, r, taus, batches, m, n);                                                                                  \
  }                                                                                                                    \
  void xlac_rt_householder_product_##suffix(const void* a, const void* taus, void* q, int64_t batches, int64_t m,      \
                                            int64_t n, int64_t k) {                                                    \
    HouseholderProduct<T>(a, taus, q, batches, m, n, k);                                                               \
  }                                                                                                                    \
  void xlac_rt_eigh_##suffix(const void* a, void* vectors, void* values, int32_t* info, int64_t batches, int64_t n,    \
                             int32_t lower, int32_t sort) {                                                            \
    Eigh<T>(a, vectors, values, info, batches, n, lower != 0, sort != 0);                                              \
  }                                                                                                                    \
  void xlac_rt_svd_##suffix(const void* a, void* s, void* u, void* vt, int32_t* info, int64_t batches, int64_t m,      \
                            int64_t n, int32_t full_matrices) {                                                        \
    Svd<T>(a, s, u, vt, info, batches, m, n, full_matrices != 0);                                                      \
  }                                                                                                                    \
  void xlac_rt_tridiagonal_solve_##suffix(const void* dl, const void* d, const void* du, const void* b, void* dl_out,  \
                                          void* d_out, void* du_out, void* x, int32_t* info, int64_t batches,          \
                                          int64_t n, int64_t nrhs) {                                                   \
    TridiagonalSolve<T>(dl, d, du, b, dl_out, d_out, du_out, x, info, batches, n, nrhs);                               \
  }                                                                                                                    \
  void xlac_rt_tridiagonal_reduction_##suffix(const void* a, void* out, void* d, void* e, void* taus, int64_t batches, \
                                              int64_t n, int32_t lower) {                                              \
    TridiagonalReduction<T>(a, out, d, e, taus, batches, n, lower != 0);                                               \
  }

extern "C" {
XLAC_RT_DECOMPOSITION_KERNELS(f32, F32)
XLAC_RT_DECOMPOSITION_KERNELS(f64, F64)
XLAC_RT_DECOMPOSITION_KERNELS(c64, C64)
XLAC_RT_DECOMPOSITION_KERNELS(c128, C128)
XLAC_RT_DECOMPOSITION_KERNELS(bf16, Half<kBF16>)
XLAC_RT_DECOMPOSITION_KERNELS(f16, Half<kF16>)
}  // extern "C"
