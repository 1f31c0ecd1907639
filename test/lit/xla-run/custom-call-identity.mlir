// PyTorch/XLA (tt-xla) marks every argument with a custom-call tt.mark_argument that only annotates its operand.
// xla-run cannot know that: without --custom-call-identity both backends refuse the call and the error names the
// flag; with it the calls become copies before partitioning, so the batch-sharded arguments stay sharded (no
// collective at all) and --check-against's interpreter runs the same rewrite.

// RUN: not xla-run %s 2>&1 | FileCheck %s --check-prefix=JIT
// JIT: error: codegen does not support custom-call ({{.*}}): target "tt.mark_argument" needs a custom-call handler (if it only annotates its operand, declare it an identity: --custom-call-identity=tt.mark_argument)
// RUN: not xla-run %s --backend=interpreter 2>&1 | FileCheck %s --check-prefix=INTERP
// INTERP: error: {{.*}}unsupported custom call target tt.mark_argument (if it only annotates its operand, declare it an identity: --custom-call-identity=tt.mark_argument)

// RUN: xla-run %s --custom-call-identity=tt.mark_argument --spmd-report --check-against=interpreter | FileCheck %s
// RUN: xla-run %s --custom-call-identity=other,tt.mark_argument --custom-call-identity=third --spmd-report --backend=interpreter | FileCheck %s --check-prefix=REPORT
// CHECK:      spmd: 2 partitions, 0 collectives inserted
// CHECK-NOT:  all-gather
// CHECK:      result_0 = f32[8,4]{1,0}
// CHECK:      check against the interpreter: 1 of 1 output match
// REPORT:     spmd: 2 partitions, 0 collectives inserted

// xlac and the per-core program: copies of the shards, no collective.
// RUN: xlac %s --custom-call-identity=tt.mark_argument --emit=hlo -o - | FileCheck %s --check-prefix=HLO
// HLO-NOT:    all-gather
// HLO-NOT:    custom-call
// HLO:        ROOT {{.*}} = f32[4,4]{1,0}
// Without the flag the partitioner must treat the unknown calls as opaque: it gathers both arguments for them.
// RUN: xlac %s --emit=spmd-report 2>/dev/null | FileCheck %s --check-prefix=OPAQUE
// OPAQUE: spmd: 2 partitions, 2 collectives inserted
// OPAQUE: all-gather {{.*}} for %custom-call
// RUN: xlac %s --emit=spmd-report --custom-call-identity=tt.mark_argument | FileCheck %s --check-prefix=IDENTITY
// IDENTITY: spmd: 2 partitions, 0 collectives inserted
// IDENTITY-NOT: warning

// A declared identity that is not one (here: a result of another shape) is an error at the call.
// RUN: not xla-run %S/Inputs/custom-call-identity-bad.mlir --custom-call-identity=tt.mark_argument 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: custom-call-identity-bad.mlir:5:5: error: custom-call %{{[^ ]+}} (target "tt.mark_argument") is declared an identity, so its result must have its operand's shape f32[8,4], but it is f32[4,8]
// BAD-NEXT: {{^}}    %0 = stablehlo.custom_call @tt.mark_argument(%x)
// RUN: not xla-run %s --custom-call-identity=a,,b 2>&1 | FileCheck %s --check-prefix=ARGS
// ARGS: xla-run: error: --custom-call-identity needs custom-call target names separated by commas, got 'a,,b'

module @marks attributes {mhlo.num_partitions = 2 : i32} {
  func.func public @main(%x: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}, %w: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> (tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) {
    %0 = stablehlo.custom_call @tt.mark_argument(%x) {api_version = 0 : i32, mhlo.frontend_attributes = {ttcore.argument_type = "input", ttir.name = "args_0"}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %1 = stablehlo.custom_call @tt.mark_argument(%w) {api_version = 0 : i32, mhlo.frontend_attributes = {ttcore.argument_type = "parameter", ttir.name = "weight"}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<8x4xf32>
    %3 = stablehlo.tanh %2 : tensor<8x4xf32>
    return %3 : tensor<8x4xf32>
  }
}
