// A partially manual shard_map (jax shard_map with axis_names={'a'}, the other mesh axes free) lowers as XLA exports
// it: the local values carry a manual subgroup over the manual axes (`last_tile_dims={manual, replicated}`), tiled
// along the free axes their shardings name; shardings inside the body are read the same way. Both Shardy forms
// (the dialect's sdy.manual_computation and the round-trip custom calls) give the same program, whose results equal
// the GSPMD form's (as XLA's export writes it) bit for bit.

// RUN: xla-opt %s --print-short | FileCheck %s
// RUN: xla-opt %S/Inputs/partial-manual-round-trip.mlir --print-short | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: xla-run %s --check-against=interpreter --exact --seed=3 2>/dev/null > %t.sdy
// RUN: xla-run %S/Inputs/partial-manual-round-trip.mlir --check-against=interpreter --exact --seed=3 2>/dev/null > %t.rt
// RUN: xla-run %S/Inputs/partial-manual-gspmd.mlir --check-against=interpreter --exact --seed=3 2>/dev/null > %t.gspmd
// RUN: cat %t.sdy %t.rt %t.gspmd | FileCheck %s --check-prefix=EXEC

// CHECK: custom_call_target="Sharding", sharding={devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}
// CHECK: f32[2,8]{1,0} custom-call({{.*}}), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,2,2,2]<=[4,2]T(1,0) last_tile_dims={manual, replicated}}
// CHECK: multiply({{.*}}), sharding={devices=[2,1,2,2]<=[2,2,2]T(1,0,2) last_tile_dims={manual, replicated}}
// CHECK: custom_call_target="Sharding", sharding={devices=[1,2,2,2]<=[4,2]T(1,0) last_tile_dims={manual, replicated}}
// CHECK: f32[4,8]{1,0} custom-call({{.*}}), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}
// The body function prints before the entry.
// ROUNDTRIP: multiply({{.*}}), sharding={devices=[2,1,2,2]<=[2,2,2]T(1,0,2) last_tile_dims={manual, replicated}}
// ROUNDTRIP: custom_call_target="Sharding", sharding={devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}
// ROUNDTRIP: f32[2,8]{1,0} custom-call({{.*}}), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,2,2,2]<=[4,2]T(1,0) last_tile_dims={manual, replicated}}
// ROUNDTRIP: custom_call_target="Sharding", sharding={devices=[1,2,2,2]<=[4,2]T(1,0) last_tile_dims={manual, replicated}}
// ROUNDTRIP: f32[4,8]{1,0} custom-call({{.*}}), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}

// EXEC: result_0 = f32[4,8]{1,0} [[RESULT:.*]]
// EXEC: 1 of 1 output match
// EXEC: result_0 = f32[4,8]{1,0} [[RESULT]]
// EXEC: 1 of 1 output match
// EXEC: result_0 = f32[4,8]{1,0} [[RESULT]]
// EXEC: 1 of 1 output match

sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]>
func.func @main(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {"c"}]>] out_shardings=[<@mesh, [{"a"}, {"c"}]>] manual_axes={"a"} (%arg1: tensor<2x8xf32>) {
    %1 = stablehlo.multiply %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b"}, {}]>]>} : tensor<2x8xf32>
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x8xf32>, tensor<f32>) -> tensor<8xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
    %4 = stablehlo.add %1, %3 : tensor<2x8xf32>
    sdy.return %4 : tensor<2x8xf32>
  } : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
