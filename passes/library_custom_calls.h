// Custom calls of framework runtimes whose meaning is an HLO operation, rewritten to it when a module is loaded
// (compiler.h's LoadModule, after the annotation custom calls), so that both backends and the partitioner see the
// operation. JAX's CPU linear algebra calls jaxlib's LAPACK handlers through typed FFI; their flags are ASCII codes
// in the backend_config (`{uplo = 76 : ui8}`: 'L'), and their buffers are column-major (operand_layouts), which is
// how LAPACK reads the logical matrix:
//  - lapack_{s,d,c,z}potrf_ffi {uplo}: a[..., n, n] -> (factor, info s32[...]): the Cholesky factor in the lower
//    (uplo 'L') or upper ('U') triangle, the other triangle a's own values as LAPACK leaves them; info is 0, or 1
//    where the factor has a NaN (a matrix that is not positive definite: JAX tests info == 0 only);
//  - lapack_{s,d,c,z}trsm_ffi {side, uplo, trans_x, diag}: (a, b[, alpha]) -> x: triangular-solve of op(a) x = b
//    (side 'L') or x op(a) = b ('R'), op per trans_x ('N', 'T', 'C'), unit diagonal per diag ('U'), times alpha
//    (also named blas_{s,d,c,z}trsm_ffi);
//  - the decompositions, as the calls of ir/decomposition_calls.h that both backends run with the runtime's kernels:
//    lapack_?getrf_ffi: a -> (lu, ipiv s32[..., k] 1-based, info) via LuDecomposition;
//    lapack_?geqrf_ffi: a -> (a', taus) via Qr; lapack_{s,d}orgqr_ffi / {c,z}ungqr_ffi: (a, taus) -> q via
//    ProductOfElementaryHouseholderReflectors; lapack_{s,d}syevd_ffi / {c,z}heevd_ffi {uplo, mode}: a -> (vectors,
//    eigenvalues ascending, info) via Eigh; lapack_?gesdd_ffi {mode 'A' full, 'S' reduced, 'N' no vectors}: a ->
//    (a, s descending, u, vt, info) via xlac.svd; lapack_?gtsv_ffi: (dl, d, du, b) -> (dl', d', du', x, info) via
//    xlac.tridiagonal_solve; lapack_?gehrd_ffi {low, high}: a -> (a', taus, info) via xlac.hessenberg;
//    lapack_{s,d}sytrd_ffi / {c,z}hetrd_ffi {uplo}: a -> (a', d, e, taus, info) via xlac.tridiagonal;
//    lapack_?geev_ffi {compute_left, compute_right}: a -> (w, vl, vr, info), for real types (wr, wi, vl, vr, info)
//    with complex vectors, via xlac.eig; lapack_?gees_ffi {mode, sort 'N'}: a -> (t, vs, w, sdim, info), for real
//    types (t, vs, wr, wi, sdim, info), via xlac.schur (sdim 0; vs zeros for mode 'N'; sort 'S' is an error).
//    Results past these (the workspaces jaxlib's FFI calls of mid-2024 return, which nothing reads) become zeros.
//  - the same routines in jaxlib's legacy API (2023, api_version 2): lapack_?<routine> and blas_?trsm without _ffi,
//    their flags and sizes as scalar descriptor operands before the arrays (potrf (lower, batch, n, a); getrf (batch,
//    m, n, a); geqrf (batch, m, n, lwork, a); orgqr (batch, m, n, k, lwork, a, taus); syevd (lower, batch, n, a);
//    gesdd (full_matrices, compute_uv, batch, m, n, lwork, a); trsm (left_side, lower, trans_a 0/1/2, diag, m, n,
//    batch, alpha, a, b); gehrd (n, ilo, ihi, lda, batch, lwork, a); sytrd (n, lower, lda, batch, lwork, a); geev
//    (batch, n, jobvl, jobvr, a); gees (batch, n, jobvs, sort, a)) and workspaces among the results: rewritten as
//    the typed-FFI form, the flags read from the descriptors, which must be constants. The same names with the
//    typed-FFI operands (jaxlib of mid-2024) are the typed-FFI form.
//  - the same routines as JAX's GPU exports call cuSOLVER / hipSOLVER through the typed FFI:
//    {cusolver,hipsolver}_{potrf,getrf,geqrf,orgqr,syevd,sytrd}_ffi, with LAPACK's signatures (column-major buffers,
//    1-based ipiv), the element type from the operand and the triangle as `lower = true` (syevd's `algorithm`
//    chooses only how cuSOLVER computes the same decomposition).
// And XLA's ApproxTopK {top_k, reduction_dim} (inputs..., inits...) with a comparator, as XLA runs it off TPU: an
// exact top-k, a stable sort by the comparator and a slice of the first top_k.
// And jax.random's Threefry-2x32 as JAX's GPU exports call it (cu_threefry2x32_ffi, hip_threefry2x32_ffi):
// (k0, k1, x0, x1) -> (y0, y1), u32, computed in HLO as JAX does elsewhere.
// And XLA:GPU's cuBLAS and cuDNN calls of after-optimization GPU dumps (__cublas$gemm, __cublas$lt$matmul,
// __cudnn$conv*), as the HLO dot and convolution they compute: gpu_library_calls.h.
// And jaxlib's CPU FFT (ducc_fft, dynamic_ducc_fft: JAX's jnp.fft exports of 2023) as HLO fft, and the GPU
// lu_pivots_to_permutation (cu_, hip_, cuda_) as a while loop of swaps: jaxlib_calls.h.
// Preconditions: a verified module. A call with these targets but another signature is an error at the call.
#pragma once

#include "absl/status/statusor.h"
#include "ir/diagnostics.h"
#include "ir/module.h"

namespace xlac {

// The pass (registered as library-custom-calls). Returns whether the module changed.
absl::StatusOr<bool> RunLibraryCustomCalls(Module& module);

// For drivers: runs the pass and reports its error as a located diagnostic to `diags`. Returns false on error.
bool RewriteLibraryCustomCalls(Module& module, DiagnosticEngine& diags);

}  // namespace xlac
