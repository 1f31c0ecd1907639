// A module that states fewer partitions than its shardings span contradicts itself: a located error naming both
// counts. The inferred count never overrides a stated one; --num-partitions does.

// RUN: not xlac %s --emit=spmd-report -o - 2>&1 | FileCheck %s
// RUN: xlac %s --emit=spmd-report --num-partitions=8 -o - 2>&1 | FileCheck %s --check-prefix=OVERRIDE

// CHECK: device-count-conflict.mlir:[[@LINE+4]]:{{[0-9]+}}: error: parameter %Arg_0{{[.0-9]*}}: sharding {devices=[8]<=[8]} uses 8 devices, but the program runs on 2 partitions
// OVERRIDE: spmd: 8 partitions,

module @m attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%arg0: tensor<16xf32> {mhlo.sharding = "{devices=[8]<=[8]}"}) -> tensor<16xf32> {
    %0 = stablehlo.negate %arg0 : tensor<16xf32>
    return %0 : tensor<16xf32>
  }
}
