// Matrix decompositions as custom calls that both backends run with the runtime's kernels
// (runtime/cpu/decompositions.cc: the interpreter calls them on literals, compiled code on its buffers). Three are
// XLA's own targets; the SVD, which XLA expands in HLO, is xlac's. passes/library_custom_calls.h rewrites JAX's
// LAPACK calls to these. Leading dimensions are batch dimensions, shared by every operand and result; k = min(m, n).
//
//   "LuDecomposition"  a[..., m, n] -> (lu[..., m, n], pivots s32[..., k], permutation s32[..., m][, info s32[...]])
//       partial pivoting as LAPACK's getrf, pivots 0-based; info 0, or j + 1 for the first zero pivot U[j][j].
//   "Qr"  a[..., m, n] -> (r[..., m, n], taus[..., k]): LAPACK geqrf's packed form.
//   "ProductOfElementaryHouseholderReflectors"  (a[..., m, n], taus[..., t]) -> q[..., m, n], t <= n <= m: orgqr.
//   "Eigh"  a[..., n, n] -> (vectors[..., n, n], values R[..., n][, info s32[...]]): the Hermitian matrix of a's
//       lower or upper triangle. backend_config "lower,sort_eigenvalues[,...]" as XLA's TPU Eigh ("1,1,..." when
//       empty); R is the real type of the element type.
//   "xlac.svd"  a[..., m, n] -> (s R[..., k], u[..., m, m or k], vt[..., n or k, n], info s32[...]) or
//       (s, info) without vectors; full matrices when u is m x m and vt n x n.
//   "xlac.tridiagonal_solve"  (dl[..., n], d[..., n], du[..., n], b[..., n, r]) -> (dl', d', du', x[..., n, r],
//       info s32[...]): LAPACK gtsv (dl[..., 0] and du[..., n-1] unread), every output as gtsv leaves it.
//   "xlac.tridiagonal"  a[..., n, n] -> (a'[..., n, n], d R[..., n], e R[..., n-1], taus[..., n-1]): LAPACK sytrd /
//       hetrd's packed form of the Hermitian matrix of a's lower or upper triangle; backend_config "lower" (1 or 0,
//       default 1).
//   "xlac.hessenberg"  a[..., n, n] -> (h[..., n, n], taus[..., n-1]): LAPACK gehrd's packed form; backend_config
//       "low,high" (1-based, 1 <= low <= high <= n; default 1,n).
//   "xlac.eig"  a[..., n, n] -> (w C[..., n], vl C[..., n, n], vr C[..., n, n], info s32[...]) for complex types,
//       (wr R[..., n], wi R[..., n], vl C, vr C, info) for real types: LAPACK geev (C: the complex type of a's real
//       type); backend_config "compute_left,compute_right" (1 or 0, default 1,1; vectors not computed are zeros).
//   "xlac.schur"  a[..., n, n] -> (t[..., n, n], z[..., n, n], w[..., n], info s32[...]) for complex types,
//       (t, z, wr R[..., n], wi R[..., n], info) for real types: LAPACK gees without sorting (real Schur form for
//       real types).
// n-1 is 0 for n = 0. Element types: f32, f64, c64, c128, bf16, f16; eig and schur f32, f64, c64, c128 (LAPACK's).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/instruction.h"

namespace xlac {

enum class DecompositionKind {
  kLu,
  kQr,
  kHouseholderProduct,
  kEigh,
  kSvd,
  kTridiagonalSolve,
  kTridiagonal,
  kHessenberg,
  kEig,
  kSchur,
};

inline constexpr std::string_view kSvdTarget = "xlac.svd";
inline constexpr std::string_view kTridiagonalSolveTarget = "xlac.tridiagonal_solve";
inline constexpr std::string_view kTridiagonalTarget = "xlac.tridiagonal";
inline constexpr std::string_view kHessenbergTarget = "xlac.hessenberg";
inline constexpr std::string_view kEigTarget = "xlac.eig";
inline constexpr std::string_view kSchurTarget = "xlac.schur";

// The decomposition a custom-call target names, if any.
std::optional<DecompositionKind> DecompositionKindOf(std::string_view target);

struct DecompositionCall {
  DecompositionKind kind = DecompositionKind::kLu;
  PrimitiveType type = PrimitiveType::kF32;  // of a (of b for the tridiagonal solve)
  int64_t batches = 0, m = 0, n = 0;         // the tridiagonal solve: m = n, n = the right-hand sides
  int64_t k = 0;                             // min(m, n); the number of taus of a Householder product
  bool lower = true, sort = true;
  bool full_matrices = false, compute_uv = true;
  bool has_info = false;
  int64_t low = 1, high = 0;  // the Hessenberg reduction's rows (1-based)
  bool compute_left = true, compute_right = true;
  bool real = false;  // eig and schur of a real type (separate wr, wi)
};

// The decomposition of a well-formed call of one of the targets; an error naming the call and the expected
// signature otherwise.
absl::StatusOr<DecompositionCall> DecompositionCallOf(const Instruction& call);

// The runtime kernels' suffix of an element type (xlac_rt_lu_<suffix>, ...), or nullptr when there is no kernel.
const char* DecompositionKernelSuffix(PrimitiveType type);

}  // namespace xlac
