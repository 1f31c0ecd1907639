// The shard_map of ../partial-manual.mlir in Shardy's round-trip form (JAX, early 2025: shardings on the call).
module @jit_f attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22a\22=2, \22b\22=2, \22c\22=2]>}"}, mhlo.num_partitions = 8 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%arg0) : (tensor<4x8xf32>) -> tensor<2x8xf32>
    %1 = call @xla.sdy.manual_computation_body(%0) {mhlo.frontend_attributes = {xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}, {\22c\22}]>]>", xla.sdy.manual_axes = "#sdy<manual_axes{\22a\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}, {\22c\22}]>]>"}} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %2 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%1) : (tensor<2x8xf32>) -> tensor<4x8xf32>
    return %2 : tensor<4x8xf32>
  }
  func.func @xla.sdy.manual_computation_body(%arg0: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %1 = stablehlo.multiply %arg0, %arg0 {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22b\22}, {}]>]>"}} : tensor<2x8xf32>
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x8xf32>, tensor<f32>) -> tensor<8xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
    %4 = stablehlo.add %1, %3 : tensor<2x8xf32>
    return %4 : tensor<2x8xf32>
  }
}
