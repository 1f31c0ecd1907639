// An sdy.all_slice composite on a mesh with non-iota device_ids: mesh position p = 2 x + y holds device 3 - p, so
// the offset table is indexed by partition id through that permutation (device 0 is at x = 1: rows 2-3). A
// composite whose out_sharding ("y") disagrees with what its decomposition does (groups over "x") keeps the call:
// the decomposition is what the program computes. Both assemble to iota(4x6) again (numpy emulation of the
// decomposition's all-to-all and the out-shardings).

// RUN: xla-opt %s --print-short | FileCheck %s --check-prefix=HLO
// RUN: xla-run %s --check-against=interpreter | FileCheck %s

// HLO: constant.{{[0-9]+}} = s32[4]{0} constant({2, 2, 0, 0})
// HLO: dynamic-slice.{{[0-9]+}} = f32[2,6]{1,0} dynamic-slice(custom-call.{{[0-9]+}}, reshape.{{[0-9]+}}, constant.{{[0-9]+}}), dynamic_slice_sizes={2,6}
// HLO: call.{{[0-9]+}} = f32[2,6]{1,0} call(custom-call.{{[0-9]+}}), to_apply=sdy.all_slice1, is_composite=true, frontend_attributes={composite.attributes={out_sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}

// CHECK: result_0 = f32[4,6]{1,0} { { 0, 1, 2, 3, 4, 5 }, { 6, 7, 8, 9, 10, 11 }, { 12, 13, 14, 15, 16, 17 }, { 18, 19, 20, 21, 22, 23 } }
// CHECK-NEXT: result_1 = f32[4,6]{1,0} { { 0, 1, 2, 3, 4, 5 }, { 6, 7, 8, 9, 10, 11 }, { 12, 13, 14, 15, 16, 17 }, { 18, 19, 20, 21, 22, 23 } }
// CHECK: 2 of 2 outputs match

module @all_slice_device_ids attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>
  func.func @main() -> (tensor<4x6xf32>, tensor<4x6xf32>) {
    %i = stablehlo.iota dim = 0 : tensor<24xf32>
    %a = stablehlo.reshape %i : (tensor<24xf32>) -> tensor<4x6xf32>
    %0:2 = sdy.manual_computation(%a)
        in_shardings=[<@mesh, [{}, {}]>]
        out_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{"x"}, {}]>]
        manual_axes={"x", "y"} (%arg0: tensor<4x6xf32>) {
      %1 = stablehlo.composite "sdy.all_slice" %arg0 {composite_attributes = {out_sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, decomposition = @sdy.all_slice1} : (tensor<4x6xf32>) -> tensor<2x6xf32>
      %2 = stablehlo.composite "sdy.all_slice" %arg0 {composite_attributes = {out_sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}, decomposition = @sdy.all_slice1} : (tensor<4x6xf32>) -> tensor<2x6xf32>
      sdy.return %1, %2 : tensor<2x6xf32>, tensor<2x6xf32>
    } : (tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>)
    return %0#0, %0#1 : tensor<4x6xf32>, tensor<4x6xf32>
  }
  func.func private @sdy.all_slice1(%arg0: tensor<4x6xf32>) -> tensor<2x6xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<4x6xf32>) -> tensor<2x2x6xf32>
    %1 = "stablehlo.all_to_all"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 0 : i64, replica_groups = dense<[[3, 1], [2, 0]]> : tensor<2x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64}> : (tensor<2x2x6xf32>) -> tensor<2x2x6xf32>
    %2 = stablehlo.slice %1 [0:1, 0:2, 0:6] : (tensor<2x2x6xf32>) -> tensor<1x2x6xf32>
    %3 = stablehlo.reshape %2 : (tensor<1x2x6xf32>) -> tensor<2x6xf32>
    return %3 : tensor<2x6xf32>
  }
}
