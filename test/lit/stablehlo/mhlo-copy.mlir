// torch-xla's GSPMD exports (tt-xla's shlo_compiler dumps) put an mhlo.copy carrying the sharding before each
// SPMDFullToShardShape and SPMDShardToFullShape: it is HLO's copy. Rows 0-1 and 2-3 of x on the two devices, summed
// by an all-reduce written with tt-xla's device ids: [[0+4, 1+5], [2+6, 3+7]] on both.

// RUN: xla-opt %s --print-short | FileCheck %s --check-prefix=HLO
// RUN: xla-run %s | FileCheck %s
// RUN: xla-run %s --backend=interpreter | FileCheck %s

// HLO:      copy.3 = f32[4,2]{1,0} copy(reshape.2), sharding={devices=[2,1]<=[2]}
// HLO-NEXT: custom-call.4 = f32[2,2]{1,0} custom-call(copy.3), custom_call_target="SPMDFullToShardShape", sharding={manual}
// HLO:      copy.9 = f32[2,2]{1,0} copy(all-reduce.8), sharding={manual}
// CHECK: result_0 = f32[2,2]{1,0} { { 4, 6 }, { 8, 10 } }

module @SyncTensorsGraph.7 attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main() -> tensor<2x2xf32> {
    %x = stablehlo.iota dim = 0 : tensor<8xf32>
    %r = stablehlo.reshape %x : (tensor<8xf32>) -> tensor<4x2xf32>
    %0 = mhlo.copy %r {mhlo.sharding = "{devices=[2,1]<=[2]}"} : tensor<4x2xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<4x2xf32>) -> tensor<2x2xf32>
    %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %3 = mhlo.copy %2 {mhlo.sharding = "{manual}"} : tensor<2x2xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{replicated}"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    return %4 : tensor<2x2xf32>
  }
}
