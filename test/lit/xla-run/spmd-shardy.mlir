// JAX's Shardy export: a 2x2 mesh, x sharded on rows over "x" and w on columns over "y"; the result is tiled on both
// with no communication at all, and equals the unpartitioned program.
// RUN: xla-run %s --spmd-report --check-against=interpreter | FileCheck %s
// CHECK: spmd: 4 partitions, 0 collectives inserted
// CHECK: result_0 = f32[8,4]{1,0}
// CHECK: check against the interpreter: 1 of 1 output match
module @jit_f attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %1 = stablehlo.tanh %0 : tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}
