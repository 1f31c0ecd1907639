// sdy.manual_computation (JAX shard_map) printed with debug info: locations after its region arguments, inside the
// body, on the sdy.return and on the op.

// RUN: xla-opt %s --print-short | FileCheck %s
// RUN: xla-opt %s --print-short | xla-opt - --print-short | FileCheck %s

// CHECK: HloModule jit_f
// CHECK: custom_call_target="SPMDFullToShardShape"
// CHECK: multiply(
// CHECK: custom_call_target="SPMDShardToFullShape"

#loc1 = loc("x")
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["X"=2]> loc(#loc)
  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X"}]>} loc(#loc1)) -> (tensor<8xf32> {jax.result_info = ""}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"X"}]>] out_shardings=[<@mesh, [{"X"}]>] manual_axes={"X"} (%arg1: tensor<4xf32> loc("shard_map"(#loc1))) {
      %1 = stablehlo.multiply %arg1, %arg1 : tensor<4xf32> loc(#loc2)
      sdy.return %1 : tensor<4xf32> loc(#loc)
    } : (tensor<8xf32>) -> tensor<8xf32> loc(#loc3)
    return %0 : tensor<8xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("mul"("f.py":3:4))
#loc3 = loc("shard_map")
