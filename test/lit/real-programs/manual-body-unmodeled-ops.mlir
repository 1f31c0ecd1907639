// Inside a fully manual body (tt-xla's MoE layers), collectives and the exporter's own custom calls are ops the
// propagation rules do not model: on manual operands they are manual, and so is everything computed from them,
// instead of defaulting to {replicated} and failing to partition ("cannot reshard between manual and non-manual").

// RUN: xla-opt %s --passes=sharding-propagation --print-short | FileCheck %s
// RUN: xlac %s --emit=spmd-report -o - | FileCheck %s --check-prefix=REPORT

// CHECK: all-gather({{.*}}), channel_id=1, replica_groups={{[{][{]}}0,2},{1,3}}, dimensions={1}, sharding={manual}
// CHECK: custom-call({{.*}}), custom_call_target="tt.dispatch", sharding={{[{][{]}}manual}, {manual}}
// CHECK: get-tuple-element({{.*}}), index=0, sharding={manual}
// CHECK: reshape({{.*}}), sharding={manual}
// REPORT: spmd: 4 partitions,

module @m attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x16xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"} (%a: tensor<4x8xf32>) {
      %1 = "stablehlo.all_gather"(%a) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>}> : (tensor<4x8xf32>) -> tensor<4x16xf32>
      %2:2 = stablehlo.custom_call @tt.dispatch(%1) : (tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4xi32>)
      %3 = stablehlo.reshape %2#0 : (tensor<4x16xf32>) -> tensor<64xf32>
      %4 = stablehlo.reshape %3 : (tensor<64xf32>) -> tensor<4x16xf32>
      sdy.return %4 : tensor<4x16xf32>
    } : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}
