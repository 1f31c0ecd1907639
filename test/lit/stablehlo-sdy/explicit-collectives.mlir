// Shardy's explicit collectives (a program Shardy partitioned but left in the global view, as tt-mlir's tests
// write them) keep their operand's global value and give it out_sharding: they lower to sharding constraints and
// the partitioner makes the collectives again. Every step here is the identity on x = iota.

// RUN: xla-run %s --check-against=interpreter | FileCheck %s
// RUN: xla-opt %s --print-short | FileCheck %s --check-prefix=HLO

// CHECK: result_0 = f32[4,8]{1,0} { { 0, 1, 2, 3, 4, 5, 6, 7 }, { 8, 9, 10, 11, 12, 13, 14, 15 }, { 16, 17, 18, 19, 20, 21, 22, 23 }, { 24, 25, 26, 27, 28, 29, 30, 31 } }
// CHECK: check against the interpreter: 1 of 1 output match

// HLO-COUNT-6: custom_call_target="Sharding"
// HLO-NOT: sdy.

module @collectives attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main() -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %i = stablehlo.iota dim = 0 : tensor<32xf32>
    %x = stablehlo.reshape %i : (tensor<32xf32>) -> tensor<4x8xf32>
    %0 = sdy.all_slice [{"x"}, {"y"}] %x out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<4x8xf32>
    %1 = sdy.all_to_all [{"x": 0->1}] %0 out_sharding=<@mesh, [{}, {"y", "x"}]> : tensor<4x8xf32>
    %2 = sdy.collective_permute %1 out_sharding=<@mesh, [{}, {"x", "y"}]> : tensor<4x8xf32>
    %3 = sdy.all_gather [{}, {"x", "y"}] %2 out_sharding=<@mesh, [{}, {}]> : tensor<4x8xf32>
    %4 = sdy.reduce_scatter [{"y"}, {}] %3 out_sharding=<@mesh, [{"y"}, {}]> : tensor<4x8xf32>
    %5 = sdy.all_reduce {"x"} %4 out_sharding=<@mesh, [{"y"}, {}]> : tensor<4x8xf32>
    return %5 : tensor<4x8xf32>
  }
}
