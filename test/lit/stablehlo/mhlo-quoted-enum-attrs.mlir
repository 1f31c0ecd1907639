// MLIR of 2022 printed MHLO's enum attributes with a quoted body (#mhlo<"comparison_direction GT">), as XLA's MHLO
// exports and IREE's e2e test inputs (tests/e2e/models/fragment_000.mlir) still have them: read as the unquoted form.
// Expected values computed by hand / numpy (x > 0 with x = [-1, 0, 2]; [[1, 2], [3, 4]] @ [[5], [6]] = [[17], [39]]).

// RUN: xla-run %s --no-print | FileCheck %s
// RUN: xla-opt %s --print-short | FileCheck %s --check-prefix=HLO
// CHECK-NOT: error
// CHECK: 2 checks: 2 passed, 0 failed
// HLO: compare({{.*}}), direction=GT
// HLO: dot({{.*}}), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,default}

func.func @main() {
  %x = mhlo.constant dense<[-1.0, 0.0, 2.0]> : tensor<3xf32>
  %z = mhlo.constant dense<0.0> : tensor<3xf32>
  %0 = "mhlo.compare"(%x, %z) {comparison_direction = #mhlo<"comparison_direction GT">, name = "compare.1"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  check.expect_eq_const %0, dense<[false, false, true]> : tensor<3xi1>
  %a = mhlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = mhlo.constant dense<[[5.0], [6.0]]> : tensor<2x1xf32>
  %1 = "mhlo.dot"(%a, %b) {precision_config = [#mhlo<"precision HIGHEST">, #mhlo<"precision DEFAULT">]} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  check.expect_almost_eq_const %1, dense<[[17.0], [39.0]]> : tensor<2x1xf32>
  return
}
