// jax.jit without out_shardings: JAX writes no sharding on the results (jax.result_info only) and lets XLA's
// propagation choose them (allow_spmd_sharding_propagation_to_output in its compile options). The result stays
// sharded like its producer, so no all-gather is inserted at the end; given an explicit {replicated}, it is gathered.

// RUN: xlac %s --emit=spmd-report -o - 2>/dev/null | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --no-print --seed=1 2>/dev/null | FileCheck %s --check-prefix=EXEC
// RUN: sed -e 's/jax.result_info = ""}/jax.result_info = "", mhlo.sharding = "{replicated}"}/' %s > %t.replicated.mlir
// RUN: xlac %t.replicated.mlir --emit=spmd-report -o - 2>/dev/null | FileCheck %s --check-prefix=REPLICATED

// CHECK: spmd: 4 partitions, 0 collectives inserted
// EXEC: check against the interpreter: 1 of 1 output match
// REPLICATED: spmd: 4 partitions, 1 collective inserted
// REPLICATED-NEXT: all-gather

module @jit_scale attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> (tensor<8x16xf32> {jax.result_info = ""}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x16xf32>
    %1 = stablehlo.tanh %0 : tensor<8x16xf32>
    return %1 : tensor<8x16xf32>
  }
}
