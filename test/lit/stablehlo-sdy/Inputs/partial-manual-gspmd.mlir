// What XLA's export writes for the same shard_map.
module @jit_f attributes {mhlo.num_partitions = 8 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{devices=[1,2,2,2]<=[4,2]T(1,0) last_tile_dims={manual, replicated}}"} : (tensor<4x8xf32>) -> tensor<2x8xf32>
    %2 = stablehlo.multiply %1, %1 {mhlo.sharding = "{devices=[2,1,2,2]<=[2,2,2]T(1,0,2) last_tile_dims={manual, replicated}}"} : tensor<2x8xf32>
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x8xf32>, tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
    %5 = stablehlo.add %2, %4 : tensor<2x8xf32>
    %6 = stablehlo.custom_call @Sharding(%5) {mhlo.sharding = "{devices=[1,2,2,2]<=[4,2]T(1,0) last_tile_dims={manual, replicated}}"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %7 = stablehlo.custom_call @SPMDShardToFullShape(%6) {mhlo.sharding = "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}"} : (tensor<2x8xf32>) -> tensor<4x8xf32>
    return %7 : tensor<4x8xf32>
  }
}
