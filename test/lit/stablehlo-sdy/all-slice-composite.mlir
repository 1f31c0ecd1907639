// stablehlo.composite "sdy.all_slice" as tt-xla exports Shardy's all_slice inside a manual region: the
// decomposition is reshape + all_to_all over the slicing axes + slice [0:1] per sliced dimension. When the operand
// is an argument of the fully manual body whose in-sharding leaves the slicing axes free (so the all-to-all groups
// hold equal values), that is each device's own chunk, and the composite lowers to a dynamic-slice at offsets looked
// up by partition-id (device d = 4 x + y on this iota mesh; "y":(2)2 is y mod 2). The other composites keep the
// call: %arg1 is split along "x", so the decomposition gives group member 0's chunk, not the device's own; %n is
// computed in the body.
//
// The values: iota(8x12) in, so results 0-3 (every device's chunk assembled by the out-shardings, and the
// decomposition called directly) are iota again; result 4 is member 0's rows 0-3 (numpy emulation of the
// decomposition's all-to-all; a local slice would give [[A[0:4, 0:6], A[4:8, 6:12]]] instead).

// RUN: xla-opt %s --print-short | FileCheck %s --check-prefix=HLO
// RUN: xla-run %s --check-against=interpreter | FileCheck %s

// HLO-LABEL: ENTRY main
// HLO: [[ARG:custom-call.[0-9]+]] = f32[8,12]{1,0} custom-call({{.*}}), custom_call_target="SPMDFullToShardShape", sharding={manual}
// [{}, {"x"}]: column offset 6 x.
// HLO: [[Z:constant.[0-9]+]] = s32[] constant(0)
// HLO-NEXT: [[T1:constant.[0-9]+]] = s32[8]{0} constant({0, 0, 0, 0, 6, 6, 6, 6})
// HLO-NEXT: [[P1:partition-id.[0-9]+]] = u32[] partition-id()
// HLO-NEXT: [[C1:convert.[0-9]+]] = s32[] convert([[P1]])
// HLO-NEXT: [[E1:dynamic-slice.[0-9]+]] = s32[1]{0} dynamic-slice([[T1]], [[C1]]), dynamic_slice_sizes={1}
// HLO-NEXT: [[O1:reshape.[0-9]+]] = s32[] reshape([[E1]])
// HLO-NEXT: dynamic-slice.{{[0-9]+}} = f32[8,6]{1,0} dynamic-slice([[ARG]], [[Z]], [[O1]]), dynamic_slice_sizes={8,6}
// [{"y"}, {"x"}]: row offset 2 y, column offset 6 x.
// HLO: constant.{{[0-9]+}} = s32[8]{0} constant({0, 2, 4, 6, 0, 2, 4, 6})
// HLO: constant.{{[0-9]+}} = s32[8]{0} constant({0, 0, 0, 0, 6, 6, 6, 6})
// HLO: dynamic-slice.{{[0-9]+}} = f32[2,6]{1,0} dynamic-slice([[ARG]], reshape.{{[0-9]+}}, reshape.{{[0-9]+}}), dynamic_slice_sizes={2,6}
// [{"y":(2)2}, {}]: row offset 4 (y mod 2).
// HLO: constant.{{[0-9]+}} = s32[8]{0} constant({0, 4, 0, 4, 0, 4, 0, 4})
// HLO: dynamic-slice.{{[0-9]+}} = f32[4,12]{1,0} dynamic-slice([[ARG]], reshape.{{[0-9]+}}, constant.{{[0-9]+}}), dynamic_slice_sizes={4,12}
// HLO: call.{{[0-9]+}} = f32[8,6]{1,0} call([[ARG]]), to_apply=sdy.all_slice1{{$}}
// HLO: call.{{[0-9]+}} = f32[4,6]{1,0} call(custom-call.{{[0-9]+}}), to_apply=sdy.all_slice4, is_composite=true
// HLO: call.{{[0-9]+}} = f32[8,6]{1,0} call(negate.{{[0-9]+}}), to_apply=sdy.all_slice1, is_composite=true
// HLO-NOT: is_composite

// CHECK: result_0 = f32[8,12]{1,0} { { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }, { 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23 }, { 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35 }, { 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47 }, { 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59 }, { 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71 }, { 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83 }, { 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95 } }
// CHECK-NEXT: result_1 = f32[8,12]{1,0} { { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }, { 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23 }, { 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35 }, { 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47 }, { 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59 }, { 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71 }, { 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83 }, { 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95 } }
// CHECK-NEXT: result_2 = f32[8,12]{1,0} { { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }, { 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23 }, { 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35 }, { 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47 }, { 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59 }, { 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71 }, { 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83 }, { 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95 } }
// CHECK-NEXT: result_3 = f32[8,12]{1,0} { { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }, { 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23 }, { 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35 }, { 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47 }, { 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59 }, { 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71 }, { 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83 }, { 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95 } }
// CHECK-NEXT: result_4 = f32[4,12]{1,0} { { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }, { 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23 }, { 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35 }, { 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47 } }
// CHECK-NEXT: result_5 = f32[8,12]{1,0} { { -0, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11 }, { -12, -13, -14, -15, -16, -17, -18, -19, -20, -21, -22, -23 }, { -24, -25, -26, -27, -28, -29, -30, -31, -32, -33, -34, -35 }, { -36, -37, -38, -39, -40, -41, -42, -43, -44, -45, -46, -47 }, { -48, -49, -50, -51, -52, -53, -54, -55, -56, -57, -58, -59 }, { -60, -61, -62, -63, -64, -65, -66, -67, -68, -69, -70, -71 }, { -72, -73, -74, -75, -76, -77, -78, -79, -80, -81, -82, -83 }, { -84, -85, -86, -87, -88, -89, -90, -91, -92, -93, -94, -95 } }
// CHECK: 6 of 6 outputs match

module @all_slice attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main() -> (tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<4x12xf32>, tensor<8x12xf32>) {
    %i = stablehlo.iota dim = 0 : tensor<96xf32>
    %a = stablehlo.reshape %i : (tensor<96xf32>) -> tensor<8x12xf32>
    %0:6 = sdy.manual_computation(%a, %a)
        in_shardings=[<@mesh, [{}, {}]>, <@mesh, [{"x"}, {}]>]
        out_shardings=[<@mesh, [{}, {"x"}]>, <@mesh, [{"y"}, {"x"}]>, <@mesh, [{"y":(2)2}, {}]>, <@mesh, [{}, {"x"}]>, <@mesh, [{}, {"x"}]>, <@mesh, [{}, {"x"}]>]
        manual_axes={"x", "y"} (%arg0: tensor<8x12xf32>, %arg1: tensor<4x12xf32>) {
      %1 = stablehlo.composite "sdy.all_slice" %arg0 {composite_attributes = {out_sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, decomposition = @sdy.all_slice1} : (tensor<8x12xf32>) -> tensor<8x6xf32>
      %2 = stablehlo.composite "sdy.all_slice" %arg0 {composite_attributes = {out_sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}, decomposition = @sdy.all_slice2} : (tensor<8x12xf32>) -> tensor<2x6xf32>
      %3 = stablehlo.composite "sdy.all_slice" %arg0 {composite_attributes = {out_sharding = #sdy.sharding<@mesh, [{"y":(2)2}, {}]>}, decomposition = @sdy.all_slice3} : (tensor<8x12xf32>) -> tensor<4x12xf32>
      %4 = func.call @sdy.all_slice1(%arg0) : (tensor<8x12xf32>) -> tensor<8x6xf32>
      %5 = stablehlo.composite "sdy.all_slice" %arg1 {composite_attributes = {out_sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, decomposition = @sdy.all_slice4} : (tensor<4x12xf32>) -> tensor<4x6xf32>
      %n = stablehlo.negate %arg0 : tensor<8x12xf32>
      %6 = stablehlo.composite "sdy.all_slice" %n {composite_attributes = {out_sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, decomposition = @sdy.all_slice1} : (tensor<8x12xf32>) -> tensor<8x6xf32>
      sdy.return %1, %2, %3, %4, %5, %6 : tensor<8x6xf32>, tensor<2x6xf32>, tensor<4x12xf32>, tensor<8x6xf32>, tensor<4x6xf32>, tensor<8x6xf32>
    } : (tensor<8x12xf32>, tensor<8x12xf32>) -> (tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<4x12xf32>, tensor<8x12xf32>)
    return %0#0, %0#1, %0#2, %0#3, %0#4, %0#5 : tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<4x12xf32>, tensor<8x12xf32>
  }
  func.func private @sdy.all_slice1(%arg0: tensor<8x12xf32>) -> tensor<8x6xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<8x12xf32>) -> tensor<8x2x6xf32>
    %1 = "stablehlo.all_to_all"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 1 : i64, replica_groups = dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>, split_count = 2 : i64, split_dimension = 1 : i64}> : (tensor<8x2x6xf32>) -> tensor<8x2x6xf32>
    %2 = stablehlo.slice %1 [0:8, 0:1, 0:6] : (tensor<8x2x6xf32>) -> tensor<8x1x6xf32>
    %3 = stablehlo.reshape %2 : (tensor<8x1x6xf32>) -> tensor<8x6xf32>
    return %3 : tensor<8x6xf32>
  }
  func.func private @sdy.all_slice2(%arg0: tensor<8x12xf32>) -> tensor<2x6xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<8x12xf32>) -> tensor<4x2x12xf32>
    %1 = "stablehlo.all_to_all"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 0 : i64, replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, split_count = 4 : i64, split_dimension = 0 : i64}> : (tensor<4x2x12xf32>) -> tensor<4x2x12xf32>
    %2 = stablehlo.slice %1 [0:1, 0:2, 0:12] : (tensor<4x2x12xf32>) -> tensor<1x2x12xf32>
    %3 = stablehlo.reshape %2 : (tensor<1x2x12xf32>) -> tensor<2x12xf32>
    %4 = stablehlo.reshape %3 : (tensor<2x12xf32>) -> tensor<2x2x6xf32>
    %5 = "stablehlo.all_to_all"(%4) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 1 : i64, replica_groups = dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>, split_count = 2 : i64, split_dimension = 1 : i64}> : (tensor<2x2x6xf32>) -> tensor<2x2x6xf32>
    %6 = stablehlo.slice %5 [0:2, 0:1, 0:6] : (tensor<2x2x6xf32>) -> tensor<2x1x6xf32>
    %7 = stablehlo.reshape %6 : (tensor<2x1x6xf32>) -> tensor<2x6xf32>
    return %7 : tensor<2x6xf32>
  }
  func.func private @sdy.all_slice3(%arg0: tensor<8x12xf32>) -> tensor<4x12xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<8x12xf32>) -> tensor<2x4x12xf32>
    %1 = "stablehlo.all_to_all"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 0 : i64, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64}> : (tensor<2x4x12xf32>) -> tensor<2x4x12xf32>
    %2 = stablehlo.slice %1 [0:1, 0:4, 0:12] : (tensor<2x4x12xf32>) -> tensor<1x4x12xf32>
    %3 = stablehlo.reshape %2 : (tensor<1x4x12xf32>) -> tensor<4x12xf32>
    return %3 : tensor<4x12xf32>
  }
  func.func private @sdy.all_slice4(%arg0: tensor<4x12xf32>) -> tensor<4x6xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<4x12xf32>) -> tensor<4x2x6xf32>
    %1 = "stablehlo.all_to_all"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 1 : i64, replica_groups = dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>, split_count = 2 : i64, split_dimension = 1 : i64}> : (tensor<4x2x6xf32>) -> tensor<4x2x6xf32>
    %2 = stablehlo.slice %1 [0:4, 0:1, 0:6] : (tensor<4x2x6xf32>) -> tensor<4x1x6xf32>
    %3 = stablehlo.reshape %2 : (tensor<4x1x6xf32>) -> tensor<4x6xf32>
    return %3 : tensor<4x6xf32>
  }
}
