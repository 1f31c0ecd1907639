// Shardy ops: sharding constraints become custom-call "Sharding"; propagation-only ops disappear.

// RUN: xla-opt %s | FileCheck %s
// RUN: xla-opt %s --print-short | xla-opt - | FileCheck %s

module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  // CHECK-LABEL: ENTRY %main
  // CHECK-NEXT: %[[ARG:.*]] = f32[8,16]{1,0} parameter(0), sharding={replicated}
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
      -> (tensor<8x16xf32> {jax.result_info = "", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    // CHECK-NEXT: %[[C0:.*]] = f32[8,16]{1,0} custom-call(f32[8,16]{1,0} %[[ARG]]), custom_call_target="Sharding", sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
    // Propagation barriers, sharding groups and data flow edges only steer propagation.
    %b = sdy.propagation_barrier %0 allowed_direction=BACKWARD : tensor<8x16xf32>
    sdy.sharding_group %b group_id=3 : tensor<8x16xf32>
    %1 = sdy.data_flow_edge %b sharding=<@mesh, [{"x"}, {}]> : tensor<8x16xf32>
    // CHECK-NEXT: %[[C1:.*]] = f32[8,16]{1,0} custom-call(f32[8,16]{1,0} %[[C0]]), custom_call_target="Sharding", sharding={devices=[1,8]<=[2,4]T(1,0)}
    %2 = sdy.reshard %1 <@mesh, [{}, {"y", "x"}]> : tensor<8x16xf32>
    // The generic form of the same op.
    // CHECK-NEXT: %[[C2:.*]] = f32[8,16]{1,0} custom-call(f32[8,16]{1,0} %[[C1]]), custom_call_target="Sharding", sharding={devices=[2,4]<=[8]}
    %3 = "sdy.sharding_constraint"(%2) <{sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}> : (tensor<8x16xf32>) -> tensor<8x16xf32>
    // CHECK-NEXT: %[[K:.*]] = f32[] constant(2), sharding={replicated}
    %4 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} dense<2.0> : tensor<f32>
    // CHECK-NEXT: %[[B:.*]] = f32[8,16]{1,0} broadcast(f32[] %[[K]]), dimensions={}
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    // A named computation is inlined.
    // The result sharding goes on the root.
    // CHECK-NEXT: ROOT %{{.*}} = f32[8,16]{1,0} multiply(f32[8,16]{1,0} %[[C2]], f32[8,16]{1,0} %[[B]]), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
    %6 = sdy.named_computation<"scale">(%3, %5) (%arg1: tensor<8x16xf32>, %arg2: tensor<8x16xf32>) {
      %7 = stablehlo.multiply %arg1, %arg2 : tensor<8x16xf32>
      sdy.return %7 : tensor<8x16xf32>
    } : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    return %6 : tensor<8x16xf32>
  }
}
