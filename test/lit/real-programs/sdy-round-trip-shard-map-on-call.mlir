// Shardy's round-trip shard_map as JAX exported it in early 2025: the in/out shardings and manual axes are frontend
// attributes of the `call @xla.sdy.manual_computation_body`, and the GlobalToLocalShape / LocalToGlobalShape
// boundaries around it carry none. The boundaries take their shardings from the call, per operand and per result.

// RUN: xla-opt %s --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --no-print --seed=1 2>/dev/null | FileCheck %s --check-prefix=EXEC
// RUN: xla-opt %s --split-input-file --verify-diagnostics --print-short >/dev/null

// CHECK: custom-call({{.*}}), custom_call_target="Sharding", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
// CHECK: f32[1,4]{1,0} custom-call({{.*}}), custom_call_target="SPMDFullToShardShape", sharding={manual}
// CHECK: custom-call({{.*}}), custom_call_target="Sharding", sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
// CHECK: f32[4,1]{1,0} custom-call({{.*}}), custom_call_target="SPMDFullToShardShape", sharding={manual}
// CHECK: f32[1,1]{1,0} call(
// CHECK: custom-call({{.*}}), custom_call_target="Sharding", sharding={manual}
// CHECK-NEXT: f32[2,2]{1,0} custom-call({{.*}}), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,2]<=[4]}
// EXEC: check against the interpreter running the partitioned program on 4 devices (the module has manual regions): 1 of 1 output match

module @jit_f attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\\\22a\\\22=2, \\\22b\\\22=2]>}"}, mhlo.num_partitions = 4 : i32} {
  func.func public @main(%arg0: tensor<2x4xf32>, %arg1: tensor<4x2xf32>) -> (tensor<2x2xf32> {jax.result_info = ""}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\\\22a\\\22}, {}]>]>"}, mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %1 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%0) : (tensor<2x4xf32>) -> tensor<1x4xf32>
    %2 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%arg1) : (tensor<4x2xf32>) -> tensor<4x1xf32>
    %3 = call @xla.sdy.manual_computation_body(%1, %2) {mhlo.frontend_attributes = {xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh, [{\\\22a\\\22}, {}]>, <@mesh, [{}, {\\\22b\\\22}]>]>", xla.sdy.manual_axes = "#sdy<manual_axes{\\\22a\\\22, \\\22b\\\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{\\\22a\\\22}, {\\\22b\\\22}]>]>"}} : (tensor<1x4xf32>, tensor<4x1xf32>) -> tensor<1x1xf32>
    %4 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%3) : (tensor<1x1xf32>) -> tensor<2x2xf32>
    return %4 : tensor<2x2xf32>
  }
  func.func private @xla.sdy.manual_computation_body(%arg0: tensor<1x4xf32>, %arg1: tensor<4x1xf32>) -> tensor<1x1xf32> {
    %0 = stablehlo.dot %arg0, %arg1 : (tensor<1x4xf32>, tensor<4x1xf32>) -> tensor<1x1xf32>
    return %0 : tensor<1x1xf32>
  }
}

// -----

// A boundary with no shardings of its own and no body call to take them from.
module @jit_g attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\\\22a\\\22=2]>}"}} {
  func.func public @main(%arg0: tensor<2x4xf32>) -> tensor<1x4xf32> {
    // expected-error @+1 {{xla.sdy.GlobalToLocalShape needs xla.sdy.in_shardings in its mhlo.frontend_attributes (or on the call of the xla.sdy.manual_computation_body it feeds)}}
    %1 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%arg0) : (tensor<2x4xf32>) -> tensor<1x4xf32>
    return %1 : tensor<1x4xf32>
  }
}
