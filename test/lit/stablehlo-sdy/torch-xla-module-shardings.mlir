// torch_xla's StableHLO exports give the entry's shardings as module attributes in HLO sharding text
// (mhlo.spmd_output_sharding, mhlo.spmd_parameters_shardings): they apply where the function gives none, so the
// first result stays split over the two devices (no all-gather) and the second is gathered as it asks.

// RUN: xlac %s --emit=spmd-report -o - 2>/dev/null | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --no-print --seed=1 2>/dev/null | FileCheck %s --check-prefix=EXEC
// RUN: sed -e 's/{{devices=\[2,1\]<=\[2\]},{replicated}}/{{replicated}}/' %s > %t.bad.mlir
// RUN: not xlac %t.bad.mlir --emit=spmd-report -o - 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK:      spmd: 2 partitions, 1 collective inserted
// CHECK-NEXT: all-gather {{.*}} group of 2, 128 bytes per core
// EXEC: check against the interpreter: 2 of 2 outputs match
// BAD: error: mhlo.spmd_output_sharding has 1 sharding, but the entry returns 2 values

module @SyncTensorsGraph.9 attributes {mhlo.num_partitions = 2 : i32, mhlo.spmd_output_sharding = "{{devices=[2,1]<=[2]},{replicated}}", mhlo.spmd_parameters_shardings = ["{devices=[2,1]<=[2]}", "{replicated}"]} {
  func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
    %1 = stablehlo.multiply %arg0, %arg1 : tensor<8x8xf32>
    return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
  }
}
