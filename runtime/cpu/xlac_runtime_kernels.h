/* Library kernels shared by compiled code and the reference interpreter: fft, cholesky, triangular-solve and the
 * matrix decompositions over raw row-major buffers. Both backends call these same functions, so their results agree
 * bit for bit.
 *
 * Element suffixes name the storage of the buffers: f32/f64/bf16/f16 are real (bf16 and f16 as uint16_t bits), c64
 * and c128 are interleaved (real, imaginary) float/double pairs. Every buffer is dense and row-major; an output may
 * be the same memory as an input (inputs are read completely before anything is written). Valid C99 and C++.
 */
#ifndef XLAC_RUNTIME_CPU_XLAC_RUNTIME_KERNELS_H_
#define XLAC_RUNTIME_CPU_XLAC_RUNTIME_KERNELS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- fft ---- */
typedef enum {
  XLAC_RT_FFT = 0,   /* complex -> complex, forward */
  XLAC_RT_IFFT = 1,  /* complex -> complex, inverse, scaled by 1/prod(fft_length) */
  XLAC_RT_RFFT = 2,  /* real -> complex, keeps fft_length[-1]/2+1 outputs of the innermost dimension */
  XLAC_RT_IRFFT = 3, /* complex (Hermitian half) -> real */
} XlacRtFftType;

/* Transforms the innermost `fft_rank` (1..3) dimensions of `in` (dims `in_dims`, `rank` of them) into `out` (dims
 * `out_dims`). xlac_rt_fft_c64 reads c64 (f32 for RFFT) and writes c64 (f32 for IRFFT); xlac_rt_fft_c128 the same
 * with c128/f64. Direct DFTs in long double, rounded once to the element type. Returns 0, or -1 when the arguments
 * are invalid (bad fft_type or fft_rank), in which case nothing is written. */
int32_t xlac_rt_fft_c64(const void* in, void* out, int32_t fft_type, int32_t rank, const int64_t* in_dims,
                        const int64_t* out_dims, int32_t fft_rank, const int64_t* fft_length);
int32_t xlac_rt_fft_c128(const void* in, void* out, int32_t fft_type, int32_t rank, const int64_t* in_dims,
                         const int64_t* out_dims, int32_t fft_rank, const int64_t* fft_length);

/* ---- cholesky ---- */
/* `batches` n x n matrices: out = L with A = L L^H (lower != 0) or U with A = U^H U; the other triangle is zero.
 * Computed in complex double and rounded once; a non-positive-definite matrix gives NaNs. */
void xlac_rt_cholesky_f32(const void* a, void* out, int64_t batches, int64_t n, int32_t lower);
void xlac_rt_cholesky_f64(const void* a, void* out, int64_t batches, int64_t n, int32_t lower);
void xlac_rt_cholesky_c64(const void* a, void* out, int64_t batches, int64_t n, int32_t lower);
void xlac_rt_cholesky_c128(const void* a, void* out, int64_t batches, int64_t n, int32_t lower);
void xlac_rt_cholesky_bf16(const void* a, void* out, int64_t batches, int64_t n, int32_t lower);
void xlac_rt_cholesky_f16(const void* a, void* out, int64_t batches, int64_t n, int32_t lower);

/* ---- triangular-solve ---- */
typedef enum {
  XLAC_RT_NO_TRANSPOSE = 0,
  XLAC_RT_TRANSPOSE = 1,
  XLAC_RT_ADJOINT = 2,
} XlacRtTranspose;

/* `batches` problems: op(A) X = B (left_side != 0) or X op(A) = B with A m x m (only its `lower` or upper triangle
 * read; unit_diagonal replaces its diagonal by ones) and B, X rows x cols. Computed in complex double and rounded
 * once. */
void xlac_rt_triangular_solve_f32(const void* a, const void* b, void* x, int64_t batches, int64_t m, int64_t rows,
                                  int64_t cols, int32_t left_side, int32_t lower, int32_t unit_diagonal,
                                  int32_t transpose_a);
void xlac_rt_triangular_solve_f64(const void* a, const void* b, void* x, int64_t batches, int64_t m, int64_t rows,
                                  int64_t cols, int32_t left_side, int32_t lower, int32_t unit_diagonal,
                                  int32_t transpose_a);
void xlac_rt_triangular_solve_c64(const void* a, const void* b, void* x, int64_t batches, int64_t m, int64_t rows,
                                  int64_t cols, int32_t left_side, int32_t lower, int32_t unit_diagonal,
                                  int32_t transpose_a);
void xlac_rt_triangular_solve_c128(const void* a, const void* b, void* x, int64_t batches, int64_t m, int64_t rows,
                                   int64_t cols, int32_t left_side, int32_t lower, int32_t unit_diagonal,
                                   int32_t transpose_a);
void xlac_rt_triangular_solve_bf16(const void* a, const void* b, void* x, int64_t batches, int64_t m, int64_t rows,
                                   int64_t cols, int32_t left_side, int32_t lower, int32_t unit_diagonal,
                                   int32_t transpose_a);
void xlac_rt_triangular_solve_f16(const void* a, const void* b, void* x, int64_t batches, int64_t m, int64_t rows,
                                  int64_t cols, int32_t left_side, int32_t lower, int32_t unit_diagonal,
                                  int32_t transpose_a);

/* ---- decompositions (decompositions.cc; the Hessenberg reduction in schur.cc) ---- */
/* `batches` m x n matrices a. Every output pointer may be NULL (not computed); real outputs (eigenvalues, singular
 * values) are stored in the real type of the suffix (f32 for c64, f64 for c128).
 *
 * xlac_rt_lu_<t>: LU with partial pivoting, LAPACK getf2's pivots (the first row of largest |re| + |im|): lu holds
 *   L (unit diagonal implied) below the diagonal and U on and above it; pivots[min(m, n)] the row swapped with row
 *   j (0-based); permutation[m] the source row of each row of P a; info 0, or j + 1 for the first exact zero U[j][j].
 * xlac_rt_qr_<t>: Householder QR as LAPACK geqrf: r holds R on and above the diagonal and the reflectors v_j below
 *   it (v_j[j] = 1 implied), taus[min(m, n)] their scales; a = Q R with Q = H_0 ... H_{k-1}, H_j = I - tau_j v_j
 *   v_j^H.
 * xlac_rt_householder_product_<t>: LAPACK orgqr / ungqr: q (m x n, n <= m) = the first n columns of H_0 ...
 *   H_{k-1}, the reflectors in the first k columns of a (m x n) and taus[k].
 * xlac_rt_eigh_<t>: the Hermitian matrix whose lower (lower != 0) or upper triangle a holds (n x n) = V
 *   diag(values) V^H: vectors holds V's columns, values ascending when sort != 0. info 0, or 1 (outputs NaN) for a
 *   non-finite input.
 * xlac_rt_svd_<t>: a = U diag(s) VT, s[min(m, n)] descending; u is m x m and vt n x n when full_matrices, else
 *   m x k and k x n. info 0, or 1 (outputs NaN) for a non-finite input.
 * xlac_rt_tridiagonal_solve_<t>: LAPACK gtsv on `batches` systems A x = b, A n x n tridiagonal with sub-diagonal
 *   dl[1..n-1], diagonal d[n] and super-diagonal du[0..n-2] (dl[0] and du[n-1] are not read), b n x nrhs:
 *   Gaussian elimination with partial pivoting (zgtsv's pivot choice, |re| + |im|). The outputs are LAPACK's: d_out
 *   U's diagonal, du_out its first super-diagonal, dl_out[1..n-2] its second (dl_out[0] and dl_out[n-1] as gtsv
 *   leaves them), x the solution; info 0, or j + 1 when U[j][j] is exactly zero, in which case gtsv returns at once
 *   and the outputs are its partial state.
 * xlac_rt_tridiagonal_reduction_<t>: LAPACK sytd2 / hetd2 on the Hermitian matrix of a's lower (lower != 0) or
 *   upper triangle (n x n): Q^H A Q = T tridiagonal, d[n] (real) its diagonal, e[n-1] (real) its off-diagonal, out
 *   the packed form (the named triangle holds d, e and the reflectors v_i below / above them, the other triangle is
 *   a's), taus[n-1] the reflectors' scales (larfg's).
 * xlac_rt_hessenberg_<t>: LAPACK gehd2 on rows and columns low..high (1-based, 1 <= low <= high <= n, as gehrd's
 *   ilo and ihi): out holds the upper Hessenberg H and the reflectors below its sub-diagonal, taus[n-1] their scales
 *   (zero outside low..high-1); a = Q H Q^H with Q = H_low ... H_{high-1}. */
#define XLAC_RT_DECLARE_DECOMPOSITIONS(suffix)                                                                         \
  void xlac_rt_lu_##suffix(const void* a, void* lu, int32_t* pivots, int32_t* permutation, int32_t* info,              \
                           int64_t batches, int64_t m, int64_t n);                                                     \
  void xlac_rt_qr_##suffix(const void* a, void* r, void* taus, int64_t batches, int64_t m, int64_t n);                 \
  void xlac_rt_householder_product_##suffix(const void* a, const void* taus, void* q, int64_t batches, int64_t m,      \
                                            int64_t n, int64_t k);                                                     \
  void xlac_rt_eigh_##suffix(const void* a, void* vectors, void* values, int32_t* info, int64_t batches, int64_t n,    \
                             int32_t lower, int32_t sort);                                                             \
  void xlac_rt_svd_##suffix(const void* a, void* s, void* u, void* vt, int32_t* info, int64_t batches, int64_t m,      \
                            int64_t n, int32_t full_matrices);                                                         \
  void xlac_rt_tridiagonal_solve_##suffix(const void* dl, const void* d, const void* du, const void* b, void* dl_out,  \
                                          void* d_out, void* du_out, void* x, int32_t* info, int64_t batches,          \
                                          int64_t n, int64_t nrhs);                                                    \
  void xlac_rt_tridiagonal_reduction_##suffix(const void* a, void* out, void* d, void* e, void* taus, int64_t batches, \
                                              int64_t n, int32_t lower);                                               \
  void xlac_rt_hessenberg_##suffix(const void* a, void* out, void* taus, int64_t batches, int64_t n, int32_t low,      \
                                   int32_t high);

XLAC_RT_DECLARE_DECOMPOSITIONS(f32)
XLAC_RT_DECLARE_DECOMPOSITIONS(f64)
XLAC_RT_DECLARE_DECOMPOSITIONS(c64)
XLAC_RT_DECLARE_DECOMPOSITIONS(c128)
XLAC_RT_DECLARE_DECOMPOSITIONS(bf16)
XLAC_RT_DECLARE_DECOMPOSITIONS(f16)
#undef XLAC_RT_DECLARE_DECOMPOSITIONS

/* The nonsymmetric eigenproblems (schur.cc), for the LAPACK element types f32, f64, c64 and c128 only. LAPACK's
 * algorithms step for step: balancing (gebal), Hessenberg reduction (gehd2, orghr / unghr), the small-matrix QR
 * iteration of hseqr (zlahqr's single shift for complex types; dlahqr's Francis double shift for real types, whose
 * Schur form has standardized 2x2 blocks, dlanv2), eigenvectors by back-substitution (trevc) and gebak, so
 * eigenvalue order, block structure and vector normalization are LAPACK's; rounding follows double precision.
 *
 * xlac_rt_eig_<t>: geev on `batches` n x n matrices. Complex types: w[n] (complex) and wi NULL; real types:
 *   w = wr[n] and wi[n] (real; complex-conjugate pairs adjacent, the positive imaginary part first). vl and vr
 *   (complex even for real types: c64 for f32, c128 for f64) hold the left (u^H A = lambda u^H) and right
 *   eigenvectors as columns, each of unit 2-norm with its largest component real (positive for complex types,
 *   geev's normalizations); zeros when compute_left / compute_right is 0. info 0, i > 0 when the QR iteration
 *   failed (outputs NaN), or -4 for a non-finite input (outputs NaN), as jaxlib's geev reports.
 * xlac_rt_schur_<t>: gees without sorting: a = Z T Z^H with T upper triangular (complex types) or quasi-triangular
 *   with standardized 2x2 blocks (real types) and Z unitary (vectors); the eigenvalues on T's diagonal as geev's w
 *   or wr, wi. info as geev's.
 * Output pointers may be NULL (not stored). The phases (signs, for real types) of Schur vectors, the choice among
 * the standardized forms of a 2x2 block, and the eigenvectors of a repeated eigenvalue are decided by rounding,
 * here as in LAPACK, and may differ from a LAPACK build's; eigenvalues, their order and everything else agree to
 * rounding. */
#define XLAC_RT_DECLARE_EIGEN(suffix)                                                                             \
  void xlac_rt_eig_##suffix(const void* a, void* w, void* wi, void* vl, void* vr, int32_t* info, int64_t batches, \
                            int64_t n, int32_t compute_left, int32_t compute_right);                              \
  void xlac_rt_schur_##suffix(const void* a, void* t, void* vectors, void* w, void* wi, int32_t* info,            \
                              int64_t batches, int64_t n);

XLAC_RT_DECLARE_EIGEN(f32)
XLAC_RT_DECLARE_EIGEN(f64)
XLAC_RT_DECLARE_EIGEN(c64)
XLAC_RT_DECLARE_EIGEN(c128)
#undef XLAC_RT_DECLARE_EIGEN

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* XLAC_RUNTIME_CPU_XLAC_RUNTIME_KERNELS_H_ */
