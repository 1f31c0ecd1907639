// A program with a manual region (shard_map) has per-core bodies with collectives: --check-against runs the
// partitioned program on the interpreter, device by device, and says so. The default mode's f64 reference runs the
// partitioned program the same way (its all-reduce in f64), so the relative rule judges the result.

// RUN: xla-run %s --check-against=interpreter --no-print --seed=1 2>/dev/null | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --no-print --seed=1 --tolerance=fixed 2>/dev/null | FileCheck %s --check-prefix=FIXED

// CHECK-NOT: no f64 reference
// CHECK: check against the interpreter running the partitioned program on 4 devices (the module has manual regions): 1 of 1 output match
// CHECK-NEXT: default-mode error against an f64 reference: worst result_0: xlac's error is {{[0-9.]+}}x what the interpreter's own f32 makes

// FIXED: check against the interpreter running the partitioned program on 4 devices (the module has manual regions): 1 of 1 output match
// FIXED-NOT: f64 reference

module @jit_f attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"x"} (%arg1: tensor<2x16xf32>) {
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<2x16xf32>) -> tensor<2x16xf32>
      %2 = "stablehlo.all_gather"(%1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> : (tensor<2x16xf32>) -> tensor<8x16xf32>
      sdy.return %2 : tensor<8x16xf32>
    } : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}
