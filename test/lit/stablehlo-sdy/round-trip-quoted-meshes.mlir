// Shardy's round-trip export before mid-2024 (XLA's sdy_round_trip_import_pipeline tests of that time) quoted each
// mesh of xla.sdy.meshes once more, in the older mesh syntax without brackets:
// `{mesh = "#sdy.mesh<\"a\"=2, \"b\"=4>"}`. Those meshes mean what today's `{mesh = #sdy.mesh<["a"=2, "b"=4]>}` does:
// "a" major over 8 devices, so sharding dim 1 over "b" alone replicates over "a" (the device order [2,4]T(1,0)), and
// device_ids reorder the devices. A mesh that is only a device (device_ids=[0]) or empty (<>) is accepted unused.

// RUN: xla-opt %s --print-short | FileCheck %s
// RUN: xlac %s --emit=spmd-report -o - 2>/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: xla-run %s --check-against=interpreter --no-print --seed=1 2>/dev/null | FileCheck %s --check-prefix=EXEC
// The same module in today's form gives the same program.
// RUN: sed -e 's/{mesh = .*, maximal/{mesh = #sdy.mesh<[\\22a\\22=2, \\22b\\22=4]>, rev = #sdy.mesh<[\\22x\\22=8], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>, maximal/' %s > %t.new.mlir
// RUN: xla-opt %t.new.mlir --print-short | FileCheck %s

// CHECK: parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
// CHECK: parameter(1), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
// CHECK: custom-call({{.*}}), custom_call_target="Sharding", sharding={devices=[8,1]7,6,5,4,3,2,1,0}
// REPORT: spmd: 8 partitions,
// EXEC: check against the interpreter: 1 of 1 output match

module @quoted_meshes attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = \22#sdy.mesh<\\22a\\22=2, \\22b\\22=4>\22, rev = \22#sdy.mesh<\\22x\\22=8, device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>\22, maximal = \22#sdy.mesh<device_ids=[0]>\22, empty = \22#sdy.mesh<>\22}"}} {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22a\22}, {}]>"}},
                  %arg1: tensor<16x8xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{}, {\22b\22}]>"}}) -> tensor<8x8xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@rev, [{\22x\22}, {}]>]>"}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
}
