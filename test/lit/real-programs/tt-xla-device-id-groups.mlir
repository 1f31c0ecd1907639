// tt-xla writes the collectives of its manual computations with a channel_handle but without use_global_device_ids,
// naming devices 0..7 of a 2x4 mesh in replica_groups. Strictly (XLA's cross_replica_and_partition mode) those are
// replica ids, and with one replica only {0} is valid; xlac reads ids beyond the single replica as device ids, in both
// backends. Device (a, b) holds x[4a + b]; the all-gather pairs the two a rows, the all-reduce sums over b:
// [0+1+2+3, 4+5+6+7].

// RUN: xla-run %s | FileCheck %s
// RUN: xla-run %s --backend=interpreter | FileCheck %s
// CHECK: result_0 = f32[2]{0} {6, 22}

module @tt_style attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=4]>
  func.func public @main() -> (tensor<2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %x = stablehlo.iota dim = 0 : tensor<8xf32>
    %0 = sdy.manual_computation(%x) in_shardings=[<@mesh, [{"a", "b"}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"a", "b"} (%arg1: tensor<1xf32>) {
      %1 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>}> : (tensor<1xf32>) -> tensor<2xf32>
      %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<2xf32>) -> tensor<2xf32>
      sdy.return %2 : tensor<2xf32>
    } : (tensor<8xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
