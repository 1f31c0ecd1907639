// Shardy's round-trip form, as PyTorch/XLA and tt-xla export it: meshes and shardings as strings in
// mhlo.frontend_attributes (with MLIR's \22 escapes), no num_partitions. When a GSPMD mhlo.sharding says something
// else, Shardy's wins with a warning.

// RUN: xla-opt %s --print-short 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=WARN < %t.err
// RUN: xlac %s --emit=spmd-report -o - 2>/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: xla-run %s --check-against=interpreter --no-print --seed=1 2>/dev/null | FileCheck %s --check-prefix=EXEC

// CHECK: parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
// CHECK: parameter(1), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}
// CHECK: custom-call({{.*}}), custom_call_target="Sharding", sharding={devices=[4,2]<=[8]}
// WARN: sdy-round-trip.mlir:[[@LINE+7]]:{{[0-9]+}}: warning: argument %arg1 of @main has two shardings that disagree: GSPMD's mhlo.sharding {devices=[2,1,4]<=[8] last_tile_dim_replicate} (line [[@LINE+7]]) and Shardy's {devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}; using Shardy's
// WARN-NOT: argument %arg0
// REPORT: spmd: 8 partitions,
// REPORT: device count: 8 partitions from the sharding of
// EXEC: check against the interpreter: 1 of 1 output match

module @SyncTensorsGraph.20 attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22_axis_0\22=4, \22_axis_1\22=2]>}"}} {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22_axis_0\22}, {}]>"}, mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}, %arg1: tensor<16x4xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{}, {\22_axis_1\22}]>"}, mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}) -> tensor<8x4xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22_axis_0\22}, {\22_axis_1\22}]>]>"}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}
