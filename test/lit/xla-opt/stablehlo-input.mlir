// xla-opt reads StableHLO (by the .mlir suffix, or by content on stdin) and prints the HLO it converts to;
// StableHLO diagnostics carry the file's own line and column.

// RUN: xla-opt %s --print-short | FileCheck %s
// RUN: xla-opt - --print-short < %s | FileCheck %s
// RUN: xla-opt %s --passes=dce | xla-opt - --print-short | FileCheck %s
// RUN: not xla-opt %S/Inputs/bad-stablehlo.mlir 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: HloModule jit_add, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}
// CHECK: ENTRY main {
// CHECK-NEXT:   Arg_0.1 = f32[4]{0} parameter(0)
// CHECK-NEXT:   Arg_1.2 = f32[4]{0} parameter(1)
// CHECK-NEXT:   ROOT add.3 = f32[4]{0} add(Arg_0.1, Arg_1.2)

// ERR: bad-stablehlo.mlir:3:10: error:
// ERR-NEXT: %0 = stablehlo.frobnicate %arg0 : tensor<4xf32>
// ERR-NEXT: ^

module @jit_add {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
