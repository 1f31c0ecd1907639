// IREE's e2e tests (tests/e2e/stablehlo_ops/*.mlir) feed their ops util.unfoldable_constant values, constants its
// compiler may not fold, and state results with IREE's check ops: xlac reads the constant as a constant and runs
// the checks, so such files run as written (here an IREE-style abs test, one check of it deliberately wrong).

// RUN: not xla-run %s 2>&1 | FileCheck %s

// CHECK: iree-unfoldable-constant.mlir:[[@LINE+14]]:3: error: check.expect_eq failed: 1 of 1 element differs (exact)
// CHECK: 3 checks: 2 passed, 1 failed

func.func @tensor() {
  %input = util.unfoldable_constant dense<[-1.0, -2.0, 3.0, 4.0]> : tensor<4xf32>
  %result = "stablehlo.abs"(%input) : (tensor<4xf32>) -> tensor<4xf32>
  check.expect_almost_eq_const(%result, dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) : tensor<4xf32>
  return
}

func.func @scalar() {
  %input = util.unfoldable_constant dense<-4> : tensor<i32>
  %result = "stablehlo.abs"(%input) : (tensor<i32>) -> tensor<i32>
  check.expect_eq_const(%result, dense<4> : tensor<i32>) : tensor<i32>
  check.expect_eq_const(%result, dense<5> : tensor<i32>) : tensor<i32>
  return
}
