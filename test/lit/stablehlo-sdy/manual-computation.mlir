// sdy.manual_computation lowers as JAX's shard_map does in HLO: per operand a "Sharding" custom-call with the
// in-sharding and an SPMDFullToShardShape to the local shape ({manual}); the body inlined, its shardings {manual};
// per result a "Sharding" {manual} and an SPMDShardToFullShape with the out-sharding.

// RUN: xla-opt %s | FileCheck %s
// RUN: xla-opt %s --print-short | xla-opt - | FileCheck %s

module @jit_f attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  // CHECK-LABEL: ENTRY %main
  // CHECK-NEXT: %[[A0:.*]] = f32[8,16]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  // CHECK-NEXT: %[[S0:.*]] = f32[8,16]{1,0} custom-call(f32[8,16]{1,0} %[[A0]]), custom_call_target="Sharding", sharding={devices=[2,4]<=[8]}
  // CHECK-NEXT: %[[L0:.*]] = f32[4,4]{1,0} custom-call(f32[8,16]{1,0} %[[S0]]), custom_call_target="SPMDFullToShardShape", sharding={manual}
  // CHECK-NEXT: %[[A1:.*]] = f32[16]{0} parameter(1)
  // CHECK-NEXT: %[[S1:.*]] = f32[16]{0} custom-call(f32[16]{0} %[[A1]]), custom_call_target="Sharding", sharding={devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  // CHECK-NEXT: %[[L1:.*]] = f32[4]{0} custom-call(f32[16]{0} %[[S1]]), custom_call_target="SPMDFullToShardShape", sharding={manual}
  // CHECK-NEXT: %[[BC:.*]] = f32[4,4]{1,0} broadcast(f32[4]{0} %[[L1]]), dimensions={1}
  // CHECK-NEXT: %[[ADD:.*]] = f32[4,4]{1,0} add(f32[4,4]{1,0} %[[L0]], f32[4,4]{1,0} %[[BC]]), sharding={manual}
  // A nested manual computation without manual axes only constrains; inside a manual body that is {manual}.
  // CHECK-NEXT: %[[IN:.*]] = f32[4,4]{1,0} custom-call(f32[4,4]{1,0} %[[ADD]]), custom_call_target="Sharding", sharding={manual}
  // CHECK-NEXT: %[[NEG:.*]] = f32[4,4]{1,0} negate(f32[4,4]{1,0} %[[IN]])
  // CHECK-NEXT: %[[OUT:.*]] = f32[4,4]{1,0} custom-call(f32[4,4]{1,0} %[[NEG]]), custom_call_target="Sharding", sharding={manual}
  // CHECK-NEXT: %[[M0:.*]] = f32[4,4]{1,0} custom-call(f32[4,4]{1,0} %[[OUT]]), custom_call_target="Sharding", sharding={manual}
  // CHECK-NEXT: %[[F0:.*]] = f32[8,16]{1,0} custom-call(f32[4,4]{1,0} %[[M0]]), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,4]<=[8]}
  // CHECK-NEXT: %[[M1:.*]] = f32[4]{0} custom-call(f32[4]{0} %[[L1]]), custom_call_target="Sharding", sharding={manual}
  // CHECK-NEXT: %[[F1:.*]] = f32[16]{0} custom-call(f32[4]{0} %[[M1]]), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  // CHECK-NEXT: ROOT %{{.*}} = (f32[8,16]{1,0}, f32[16]{0}) tuple(f32[8,16]{1,0} %[[F0]], f32[16]{0} %[[F1]])
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<16xf32>)
      -> (tensor<8x16xf32>, tensor<16xf32>) {
    // The body is isolated from above: it may reuse the names of the enclosing function.
    %0:2 = sdy.manual_computation(%arg0, %arg1)
        in_shardings=[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{"y"}]>]
        out_shardings=[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{"y"}], replicated={"x"}>]
        manual_axes={"x", "y"} (%arg2: tensor<4x4xf32>, %arg3: tensor<4xf32>) {
      %0 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<4xf32>) -> tensor<4x4xf32>
      %1 = stablehlo.add %arg2, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<4x4xf32>
      %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}]>]
          manual_axes={} (%arg4: tensor<4x4xf32>) {
        %3 = stablehlo.negate %arg4 : tensor<4x4xf32>
        sdy.return %3 : tensor<4x4xf32>
      } : (tensor<4x4xf32>) -> tensor<4x4xf32>
      sdy.return %2, %arg3 : tensor<4x4xf32>, tensor<4xf32>
    } : (tensor<8x16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>)
    return %0#0, %0#1 : tensor<8x16xf32>, tensor<16xf32>
  }
}
