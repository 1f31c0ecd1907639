// tt.scaled_dot_product_attention in a sharded program (the query, key and value split over 2 partitions by heads,
// as tt-xla's tensor-parallel attention is): the rewrite happens at load, before partitioning, so the partitioner
// splits the attention's dots and softmax like any other, with no collective (grouped-query heads split the head
// dimension into kv heads x group, which keeps its tiles); the partitioned program matches the interpreter running
// the unpartitioned one, and the call's sharding stays on the value that replaces it.

// RUN: xla-run %s --check-against=interpreter --no-print --seed=3 | FileCheck %s
// RUN: xla-run %s --spmd-report --no-print --seed=3 2>&1 | FileCheck %s --check-prefix=SPMD

// CHECK: check against the interpreter: 1 of 1 output match
// SPMD-NOT: warning
// SPMD: spmd: 2 partitions, 0 collectives inserted

module @sdpa_tp attributes {mhlo.num_partitions = 2 : i32} {
  func.func public @main(%q: tensor<1x4x16x8xbf16> {mhlo.sharding = "{devices=[1,2,1,1]<=[2]}"}, %k: tensor<1x2x16x8xbf16> {mhlo.sharding = "{devices=[1,2,1,1]<=[2]}"}, %v: tensor<1x2x16x8xbf16> {mhlo.sharding = "{devices=[1,2,1,1]<=[2]}"}) -> (tensor<1x4x16x8xbf16> {mhlo.sharding = "{devices=[1,2,1,1]<=[2]}"}) {
    %0 = stablehlo.custom_call @tt.scaled_dot_product_attention(%q, %k, %v) {api_version = 0 : i32, mhlo.frontend_attributes = {is_causal = "True"}, mhlo.sharding = "{devices=[1,2,1,1]<=[2]}"} : (tensor<1x4x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>) -> tensor<1x4x16x8xbf16>
    return %0 : tensor<1x4x16x8xbf16>
  }
}
