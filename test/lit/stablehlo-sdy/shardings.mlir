// Shardy shardings on function arguments, results and ops become the HLO shardings XLA's Shardy export gives:
// tiles per dimension from the product of its axes, the mesh's device ids transposed into [sharded axes...,
// unreduced axes..., other axes...], iota form unless the mesh lists its own device ids.

// RUN: xla-opt %s | FileCheck %s
// RUN: xla-opt %s --print-short | xla-opt - | FileCheck %s

// CHECK-LABEL: ENTRY %main
// Parameters print in use order, so the checks are unordered.
module @jit_f attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  sdy.mesh @rev = <["x"=2], device_ids=[1, 0]>
  sdy.mesh @rev4 = <["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>
  sdy.mesh @iota_ids = <["x"=2, "y"=2], device_ids=[0, 1, 2, 3]>
  sdy.mesh @empty = <[]>
  sdy.mesh @maximal = <[], device_ids=[3]>
  sdy.mesh @x4 = <["x"=4]>
  func.func public @main(
  // CHECK-DAG: parameter(0), sharding={devices=[2,4]<=[8]}
      %a0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
  // CHECK-DAG: parameter(1), sharding={devices=[4,2]<=[2,4]T(1,0)}
      %a1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>},
  // CHECK-DAG: parameter(2), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
      %a2: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
  // Open dimensions and priorities keep their axes.
  // CHECK-DAG: parameter(3), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
      %a3: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"y", ?}p1]>},
  // Several axes on one dimension, minor one first.
  // CHECK-DAG: parameter(4), sharding={devices=[8,1]<=[2,4]T(1,0)}
      %a4: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}, {}]>},
  // CHECK-DAG: parameter(5), sharding={replicated}
      %a5: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
  // CHECK-DAG: parameter(6), sharding={replicated}
      %a6: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {}], replicated={"x"}>},
  // Explicit replicated axes are replication like unused ones.
  // CHECK-DAG: parameter(7), sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}
      %a7: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}], replicated={"y"}>},
  // CHECK-DAG: parameter(8), sharding={devices=[2]1,0}
      %a8: tensor<8xf32> {sdy.sharding = #sdy.sharding<@rev, [{"x"}]>},
  // Explicit device ids: each replication group is sorted, as XLA does.
  // CHECK-DAG: parameter(9), sharding={devices=[2,1,2]2,3,0,1 last_tile_dim_replicate}
      %a9: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@rev4, [{"x"}, {}]>},
  // CHECK-DAG: parameter(10), sharding={devices=[2,2]3,1,2,0}
      %a10: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@rev4, [{"y"}, {"x"}]>},
  // device_ids that are the iota are the iota form.
  // CHECK-DAG: parameter(11), sharding={devices=[2,2]<=[2,2]T(1,0)}
      %a11: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@iota_ids, [{"y"}, {"x"}]>},
  // CHECK-DAG: parameter(12), sharding={replicated}
      %a12: tensor<8xf32> {sdy.sharding = #sdy.sharding<@empty, [{}]>},
  // CHECK-DAG: parameter(13), sharding={maximal device=3}
      %a13: tensor<8xf32> {sdy.sharding = #sdy.sharding<@maximal, [{}]>},
  // An inlined mesh.
  // CHECK-DAG: parameter(14), sharding={devices=[2]<=[2]}
      %a14: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["a"=2]>, [{"a"}]>},
  // Sub-axes: "x":(pre)size takes the middle of x reshaped to [pre, size, rest].
  // CHECK-DAG: parameter(15), sharding={devices=[2,2]<=[4] last_tile_dim_replicate}
      %a15: tensor<8xf32> {sdy.sharding = #sdy.sharding<@x4, [{"x":(1)2}]>},
  // CHECK-DAG: parameter(16), sharding={devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
      %a16: tensor<8xf32> {sdy.sharding = #sdy.sharding<@x4, [{"x":(2)2}]>},
  // CHECK-DAG: parameter(17), sharding={devices=[2,2,2]<=[4,2]T(1,0) last_tile_dim_replicate}
      %a17: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y":(2)2}, {"x"}]>},
  // CHECK-DAG: parameter(18), sharding={devices=[2,2]<=[2,2]T(1,0)}
      %a18: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@x4, [{"x":(2)2}, {"x":(1)2}]>},
  // Unreduced axes become an unreduced subgroup.
  // CHECK-DAG: parameter(19), sharding={devices=[2,1,4]<=[8] last_tile_dims={unreduced}}
      %a19: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>},
  // CHECK-DAG: parameter(20), sharding={devices=[1,1,2,4]<=[8] last_tile_dims={unreduced, replicated}}
      %a20: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>},
  // CHECK-DAG: parameter(21), sharding={unreduced}
      %a21: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"x", "y"}>},
  // Scalars, and the older bracket-less mesh syntax.
  // CHECK-DAG: parameter(22), sharding={replicated}
      %a22: tensor<f32> {sdy.sharding = #sdy.sharding<mesh<"a"=2>, []>},
  // mhlo.sharding strings still work next to sdy.sharding.
  // CHECK-DAG: parameter(23), sharding={devices=[2,1]0,1}
      %a23: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,1]0,1}"})
      -> (tensor<8x16xf32> {jax.result_info = "a", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
          tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
    // Op shardings: one per result; several results give a tuple sharding.
    // CHECK-DAG: add({{.*}}), sharding={devices=[2,4]<=[8]}
    %0 = stablehlo.add %a0, %a1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
    // CHECK-DAG: opt-barrier({{.*}}), sharding={{[{][{]}}devices=[8,1]<=[8]}, {maximal device=3}}
    %1:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {}]>, <@maximal, [{}, {}]>]>} %0, %a2 : tensor<8x16xf32>, tensor<8x16xf32>
    // The result shardings go on the root tuple.
    // CHECK-DAG: ROOT {{.*}} tuple({{.*}}), sharding={{[{][{]}}devices=[2,1,4]<=[8] last_tile_dim_replicate}, {devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}}
    return %1#0, %1#1 : tensor<8x16xf32>, tensor<8x16xf32>
  }
}
