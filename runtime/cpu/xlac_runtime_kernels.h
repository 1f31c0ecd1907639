/* Library kernels shared by compiled code and the reference interpreter: fft, cholesky and triangular-solve over
 * raw row-major buffers. Both backends call these same functions, so their results agree bit for bit.
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

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* XLAC_RUNTIME_CPU_XLAC_RUNTIME_KERNELS_H_ */
