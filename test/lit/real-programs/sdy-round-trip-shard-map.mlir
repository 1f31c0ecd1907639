// Shardy's round-trip form of a shard_map, as StableHLO that went through HLO carries it: the body is a function
// called between xla.sdy.GlobalToLocalShape and xla.sdy.LocalToGlobalShape custom calls whose frontend attributes
// hold the in/out shardings and manual axes. They lower to the shard_map boundaries; the body runs per core.

// RUN: xla-opt %s --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --no-print --seed=1 2>/dev/null | FileCheck %s --check-prefix=EXEC

// CHECK: custom-call({{.*}}), custom_call_target="Sharding", sharding={devices=[4,2]<=[8]}
// CHECK-NEXT: f32[2,8]{1,0} custom-call({{.*}}), custom_call_target="SPMDFullToShardShape", sharding={manual}
// CHECK: f32[2,32]{1,0} call(
// CHECK: custom-call({{.*}}), custom_call_target="Sharding", sharding={manual}
// CHECK-NEXT: f32[8,32]{1,0} custom-call({{.*}}), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
// EXEC: check against the interpreter running the partitioned program on 8 devices (the module has manual regions): 1 of 1 output match

module @jit_f attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh_0 = #sdy.mesh<[\22a\22=4, \22b\22=2]>}"}} {
  func.func public @main(%arg0: tensor<8x16xf32>, %arg1: tensor<16x32xf32>) -> tensor<8x32xf32> {
    %0:2 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%arg0, %arg1) {mhlo.frontend_attributes = {xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh_0, [{\22a\22}, {\22b\22}]>, <@mesh_0, [{\22b\22}, {}], replicated={\22a\22}>]>", xla.sdy.manual_axes = "#sdy<manual_axes{\22a\22, \22b\22}>"}} : (tensor<8x16xf32>, tensor<16x32xf32>) -> (tensor<2x8xf32>, tensor<8x32xf32>)
    %1 = call @xla.sdy.manual_computation_body(%0#0, %0#1) : (tensor<2x8xf32>, tensor<8x32xf32>) -> tensor<2x32xf32>
    %2 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%1) {mhlo.frontend_attributes = {xla.sdy.manual_axes = "#sdy<manual_axes{\22a\22, \22b\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh_0, [{\22a\22}, {}], replicated={\22b\22}>]>"}} : (tensor<2x32xf32>) -> tensor<8x32xf32>
    return %2 : tensor<8x32xf32>
  }
  func.func private @xla.sdy.manual_computation_body(%arg0: tensor<2x8xf32>, %arg1: tensor<8x32xf32>) -> tensor<2x32xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2x8xf32>
    %1 = stablehlo.dot %0, %arg1 : (tensor<2x8xf32>, tensor<8x32xf32>) -> tensor<2x32xf32>
    %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<2x32xf32>) -> tensor<2x32xf32>
    return %2 : tensor<2x32xf32>
  }
}
