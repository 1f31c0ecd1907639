// Failed checks: each is reported at the check op (file:line:col) with the first mismatching elements (index,
// got, want, why), then the summary line; the exit status is 1. Passing checks are only counted.

// RUN: not xla-run %s | FileCheck %s -DFILE=%s
// CHECK:      [[FILE]]:[[@LINE+18]]:5: error: check.expect_close failed: 2 of 6 elements differ (allowed 3 ulp)
// CHECK-NEXT:   at [0, 1]: got 2.000001 (0x40000004) want 2 (0x40000000) — 4 ulp
// CHECK-NEXT:   at [1, 2]: got 1 (0x3f800000) want 1.0000005 (0x3f800004) — 4 ulp
// CHECK-NOT:  at
// CHECK:      [[FILE]]:[[@LINE+16]]:5: error: check.expect_eq failed: 1 of 3 elements differs (exact)
// CHECK-NEXT:   at [2]: got 3 want 4 — not equal
// CHECK-NEXT: [[FILE]]:[[@LINE+15]]:5: error: check.expect_almost_eq failed: 1 of 1 element differs (tolerance 0.001)
// CHECK-NEXT:   at []: got nan (0x7fc00000) want 1 (0x3f800000) — non-finite mismatch
// CHECK-NEXT: 4 checks: 1 passed, 3 failed

module {
  func.func public @main() -> tensor<3xi32> {
    %0 = stablehlo.constant dense<[[1.0, 2.000001, 3.0], [4.0, 5.0, 1.0]]> : tensor<2x3xf32>
    %1 = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 1.0000005]]> : tensor<2x3xf32>
    %2 = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
    %3 = stablehlo.constant dense<[1, 2, 4]> : tensor<3xi32>
    %4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %5 = stablehlo.constant dense<1.0> : tensor<f32>
    stablehlo.custom_call @check.expect_close(%0, %1) {has_side_effect = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> ()
    stablehlo.custom_call @check.expect_eq(%2, %2) {has_side_effect = true} : (tensor<3xi32>, tensor<3xi32>) -> ()
    stablehlo.custom_call @check.expect_eq(%2, %3) {has_side_effect = true} : (tensor<3xi32>, tensor<3xi32>) -> ()
    stablehlo.custom_call @check.expect_almost_eq(%4, %5) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
    return %2 : tensor<3xi32>
  }
}

// The interpreter reports the same failures identically (the JIT above is the default backend).
// RUN: not xla-run %s --backend=interpreter | FileCheck %s -DFILE=%s
