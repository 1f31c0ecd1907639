// jaxlib LAPACK calls library-custom-calls cannot rewrite are errors at the call (Inputs/lapack-*.mlir).

// A legacy (api_version 2) call's flags must be constants: they choose what the rewrite builds.
// RUN: not xla-run %S/Inputs/lapack-legacy-nonconstant.mlir 2>&1 | FileCheck %s --check-prefix=NONCONSTANT
// NONCONSTANT: lapack-legacy-nonconstant.mlir:6:5: error: custom-call %{{.*}} (target "lapack_spotrf"): descriptor operand 0 (%{{.*}}) of (lower, batch, n, a) -> (a, info) must be a constant scalar integer
// RUN: not xla-opt %S/Inputs/lapack-legacy-operands.mlir --passes=library-custom-calls 2>&1 | FileCheck %s --check-prefix=OPERANDS
// OPERANDS: lapack-legacy-operands.mlir:5:5: error: {{.*}}(target "lapack_sgetrf"): expected (batch, m, n, a) -> (a, ipiv, info), as jaxlib's legacy (api_version 2) call

// gees's sort 'S' needs a select function jaxlib never passes.
// RUN: not xla-run %S/Inputs/lapack-gees-sort.mlir 2>&1 | FileCheck %s --check-prefix=SORT
// SORT: lapack-gees-sort.mlir:4:5: error: {{.*}}(target "lapack_zgees_ffi"): sort = 83 ('S', ordering the eigenvalues by a select function) is not supported

// gehrd's low and high out of range; geev of a real type with a complex type's results.
// RUN: not xla-run %S/Inputs/lapack-gehrd-range.mlir 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: lapack-gehrd-range.mlir:4:5: error: {{.*}}(target "lapack_sgehrd_ffi"): needs low and high with 1 <= low <= high <= 3
// RUN: not xla-run %S/Inputs/lapack-geev-results.mlir 2>&1 | FileCheck %s --check-prefix=GEEV
// GEEV: lapack-geev-results.mlir:4:5: error: {{.*}}(target "lapack_sgeev_ffi"): result 0 should be f32[2]: expected {{.*}}(wr[..., n], wi[..., n], vl, vr, info) with complex vl and vr for real types
