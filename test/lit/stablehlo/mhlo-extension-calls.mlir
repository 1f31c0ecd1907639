// torch_xla's exported_program_to_stablehlo (through XLA's hlo-legalize-to-stablehlo) writes the MHLO ops StableHLO
// lacks as `custom_call @mhlo.<op>` with the op's attributes in mhlo.attributes (MHLO's extensibility protocol).
// They lower to the op itself, as XLA's stablehlo-legalize-to-hlo turns them back into it: MHLO's name where
// StableHLO has the op (tan, copy), else CHLO's lowering (erf, the hyperbolic functions, lgamma, ...); mhlo.topk takes
// k and largest. Op-level attributes (shardings) apply to the op.

// RUN: xla-opt %s --print-short | FileCheck %s --check-prefix=HLO
// RUN: xla-run %s --no-print | FileCheck %s
// RUN: xla-run %s --no-print --backend=interpreter | FileCheck %s

// HLO-NOT: custom-call
// HLO:     erf(
// HLO:     topk({{.*}}), k=2, largest=false
// HLO:     topk({{.*}}), k=2, largest=true
// HLO:     copy({{.*}}), sharding={replicated}
// HLO:     tan(
// CHECK-NOT: error
// CHECK: 12 checks: 12 passed, 0 failed

module @IrToHlo.42 {
  func.func public @main() {
    %x = stablehlo.constant dense<[0.5, -1.0, 2.0, 0.0]> : tensor<4xf32>
    %erf = stablehlo.custom_call @mhlo.erf(%x) {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    check.expect_almost_eq_const %erf, dense<[0.520499878, -0.842700793, 0.995322265, 0.0]> : tensor<4xf32>

    %t = stablehlo.constant dense<[3.0, 1.0, 4.0, 2.0, 5.0]> : tensor<5xf32>
    %lo:2 = stablehlo.custom_call @mhlo.topk(%t) {mhlo.attributes = {k = 2 : i64, largest = false}, mhlo.version = 1 : i64} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>)
    check.expect_eq_const %lo#0, dense<[1.0, 2.0]> : tensor<2xf32>
    check.expect_eq_const %lo#1, dense<[1, 3]> : tensor<2xi32>
    %hi:2 = stablehlo.custom_call @mhlo.topk(%t) {mhlo.attributes = {k = 2 : i64, largest = true}, mhlo.version = 1 : i64} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>)
    check.expect_eq_const %hi#0, dense<[5.0, 4.0]> : tensor<2xf32>
    check.expect_eq_const %hi#1, dense<[4, 2]> : tensor<2xi32>

    %copy = stablehlo.custom_call @mhlo.copy(%x) {mhlo.attributes = {}, mhlo.sharding = "{replicated}", mhlo.version = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    check.expect_eq_const %copy, dense<[0.5, -1.0, 2.0, 0.0]> : tensor<4xf32>

    %one = stablehlo.constant dense<1.0> : tensor<f32>
    %tan = stablehlo.custom_call @mhlo.tan(%one) {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<f32>) -> tensor<f32>
    check.expect_almost_eq_const %tan, dense<1.55740772> : tensor<f32>
    %cosh = stablehlo.custom_call @mhlo.cosh(%one) {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<f32>) -> tensor<f32>
    check.expect_almost_eq_const %cosh, dense<1.54308063> : tensor<f32>
    %sinh = stablehlo.custom_call @mhlo.sinh(%one) {mhlo.attributes = {}} : (tensor<f32>) -> tensor<f32>
    check.expect_almost_eq_const %sinh, dense<1.17520119> : tensor<f32>
    // The generic form spells custom_call's defaults; they say nothing.
    %asinh = "stablehlo.custom_call"(%one) <{api_version = 1 : i32, backend_config = "", call_target_name = "mhlo.asinh", has_side_effect = false}> {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<f32>) -> tensor<f32>
    check.expect_almost_eq_const %asinh, dense<0.881373584> : tensor<f32>

    %two = stablehlo.constant dense<2.0> : tensor<f32>
    %acosh = stablehlo.custom_call @mhlo.acosh(%two) {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<f32>) -> tensor<f32>
    check.expect_almost_eq_const %acosh, dense<1.31695795> : tensor<f32>
    %three = stablehlo.constant dense<3.0> : tensor<f32>
    %lgamma = stablehlo.custom_call @mhlo.lgamma(%three) {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<f32>) -> tensor<f32>
    check.expect_almost_eq_const %lgamma, dense<0.693147182> : tensor<f32>
    func.return
  }
}
