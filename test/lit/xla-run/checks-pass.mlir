// StableHLO test checks that all pass: no report but the summary line, exit 0. The custom-call form uses the
// testdata defaults (3 ulp for expect_close); the check dialect's ops carry their own tolerances.

// RUN: xla-run %s --no-print | FileCheck %s
// CHECK-NOT: error
// CHECK: 4 checks: 4 passed, 0 failed

module {
  func.func public @main() {
    %0 = stablehlo.constant dense<[1.0, -0.0, 0x7FC00000, 3.0]> : tensor<4xf32>
    %1 = stablehlo.constant dense<[1.0000002, 0.0, 0x7FC00000, 3.0]> : tensor<4xf32>
    stablehlo.custom_call @check.expect_close(%0, %1) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()
    check.expect_almost_eq_const %0, dense<[1.00001, 0.0, 0x7FC00000, 3.00001]> : tensor<4xf32>
    %2 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    check.expect_eq_const %2, dense<[1, 2]> : tensor<2xi32>
    %3 = stablehlo.add %0, %0 : tensor<4xf32>
    check.expect_close %3, %3, max_ulp_difference = 0 : tensor<4xf32>, tensor<4xf32>
    func.return
  }
}

// The interpreter reports the same checks identically (the JIT above is the default backend).
// RUN: xla-run %s --no-print --backend=interpreter | FileCheck %s
