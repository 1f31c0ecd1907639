// PyTorch/XLA passes the device count at compile time: its StableHLO has shardings over the mesh but no
// mhlo.num_partitions. The count comes from the shardings (a note says so). (device-count-conflict.mlir: --num-partitions overrides.)

// RUN: xlac %s --emit=spmd-report -o - 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=NOTE < %t.err
// RUN: xla-run %s --check-against=interpreter --no-print --seed=1 2>/dev/null | FileCheck %s --check-prefix=EXEC

// CHECK: spmd: 8 partitions,
// CHECK: device count: 8 partitions from the sharding of %Arg_0{{.*}} spans 8 devices
// NOTE: note: the module does not state its device count: 8 partitions from the sharding
// EXEC: check against the interpreter: 1 of 1 output match

module @SyncTensorsGraph.12 attributes {mhlo.cross_program_prefetches = [], mhlo.is_dynamic = false} {
  func.func @main(%arg0: tensor<16x32xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}, %arg1: tensor<32x8xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<16x8xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
}
