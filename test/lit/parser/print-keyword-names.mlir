// Regression (stablehlo_parser_fuzz_smoke): a StableHLO module or function named like an HLO keyword or type
// printed as `HloModule shard_as`, which the HLO parser rejects (shard_as is a keyword of shardings). The printer
// now prints every name so that it parses back, in the long and the short form.

// RUN: xla-opt %s | FileCheck %s
// RUN: xla-opt %s | xla-opt - | FileCheck %s
// RUN: xla-opt %s --print-short | xla-opt - --print-short | FileCheck %s --check-prefix=SHORT
// CHECK: HloModule _shard_as,
// CHECK: %f32{{.*}} (Arg_0.{{[0-9]+}}: f32[2]) -> f32[2] {
// CHECK: ENTRY %main
// CHECK: call(f32[2]{0} %Arg_0.{{[0-9]+}}), to_apply=%f32
// SHORT: HloModule _shard_as,
// SHORT: {{^}}_f32{{.*}} {
// SHORT: call(Arg_0.{{[0-9]+}}), to_apply=_f32

module @shard_as {
  func.func private @f32(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.negate %x : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
  func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = func.call @f32(%x) : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
