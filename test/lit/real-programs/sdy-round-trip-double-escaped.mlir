// JAX's exports of early 2025 escaped the quotes inside Shardy's round-trip strings twice (\\\22a\\\22: `\"a\"` once
// the MLIR string is read); one level comes off, so the meshes and shardings read as in later exports. A one-device
// mesh's {replicated} and GSPMD's {devices=[1,1]<=[1]} say the same thing: no warning.

// RUN: xla-opt %s --print-short 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=WARN --allow-empty < %t.err
// RUN: xla-run %s --check-against=interpreter --no-print --seed=1 2>/dev/null | FileCheck %s --check-prefix=EXEC

// CHECK: parameter(0), sharding={devices=[2,1]<=[2]}
// CHECK: parameter(1), sharding={replicated}
// WARN-NOT: warning
// EXEC: check against the interpreter: 1 of 1 output match

module @jit_func attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\\\22a\\\22=2]>, one = #sdy.mesh<[\\\22b\\\22=1]>}"}, mhlo.num_partitions = 2 : i32} {
  func.func public @main(%arg0: tensor<2x4xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\\\22a\\\22}, {}]>"}, mhlo.sharding = "{devices=[2,1]<=[2]}"}, %arg1: tensor<2x4xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@one, [{}, {}]>"}, mhlo.sharding = "{devices=[1,1]<=[1]}"}) -> (tensor<2x4xf32> {jax.result_info = ""}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}
