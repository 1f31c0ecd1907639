// A quantized model with quantized parameters, as TFLite- and PT2E-style exporters write it: quantized entry
// arguments (random storage integers from xla-run), a per-channel quantized dense layer with an i32 accumulator,
// requantization, a quantized add of a residual, a quantized reduction and concatenation. The JIT must agree with the
// interpreter bit for bit on the storage integers.

// RUN: xla-run %s --no-print --seed=3 --check-against=interpreter --exact | FileCheck %s
// CHECK: 4 of 4 outputs match

// The storage integers of the parameters appear in the HLO as i8 / i32 values.
// RUN: xlac %s --emit=hlo -o - | FileCheck %s --check-prefix=HLO
// HLO: ENTRY %main (Arg_0.1: s8[4,8], Arg_1.2: s8[16,8], Arg_2.3: s32[16]) -> (f32[4,16], s8[4,8], s8[4,32], s8[4])

!qx = !quant.uniform<i8:f32, 2.500000e-02:-3>
!qw = !quant.uniform<i8<-127:127>:f32:0, {1.0e-2,1.1e-2,1.2e-2,1.3e-2,1.4e-2,1.5e-2,1.6e-2,1.7e-2,1.8e-2,1.9e-2,2.0e-2,2.1e-2,2.2e-2,2.3e-2,2.4e-2,2.5e-2}>
!qb = !quant.uniform<i32:f32:0, {2.5e-4,2.75e-4,3.0e-4,3.25e-4,3.5e-4,3.75e-4,4.0e-4,4.25e-4,4.5e-4,4.75e-4,5.0e-4,5.25e-4,5.5e-4,5.75e-4,6.0e-4,6.25e-4}>
!qacc = !quant.uniform<i32:f32:1, {2.5e-4,2.75e-4,3.0e-4,3.25e-4,3.5e-4,3.75e-4,4.0e-4,4.25e-4,4.5e-4,4.75e-4,5.0e-4,5.25e-4,5.5e-4,5.75e-4,6.0e-4,6.25e-4}>
!qy = !quant.uniform<i8:f32, 5.000000e-02:4>
module @jit_quantized_mlp {
  func.func public @main(%x: tensor<4x8x!qx>, %w: tensor<16x8x!qw>, %b: tensor<16x!qb>) -> (tensor<4x16xf32>, tensor<4x8xi8>, tensor<4x32x!qy>, tensor<4x!qy>) {
    %acc = stablehlo.dot_general %x, %w, contracting_dims = [1] x [1] : (tensor<4x8x!qx>, tensor<16x8x!qw>) -> tensor<4x16x!qacc>
    %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<16x!qb>) -> tensor<4x16x!qacc>
    %sum = stablehlo.add %acc, %bb : tensor<4x16x!qacc>
    %y = stablehlo.uniform_quantize %sum : (tensor<4x16x!qacc>) -> tensor<4x16x!qy>
    %zero = stablehlo.constant dense<4> : tensor<4x16x!qy>
    %relu = stablehlo.maximum %y, %zero : tensor<4x16x!qy>
    %init = stablehlo.constant dense<4> : tensor<!qy>
    %red = stablehlo.reduce(%relu init: %init) applies stablehlo.add across dimensions = [1] : (tensor<4x16x!qy>, tensor<!qy>) -> tensor<4x!qy>
    %cat = stablehlo.concatenate %relu, %relu, dim = 1 : (tensor<4x16x!qy>, tensor<4x16x!qy>) -> tensor<4x32x!qy>
    %f = stablehlo.uniform_dequantize %relu : (tensor<4x16x!qy>) -> tensor<4x16xf32>
    %xs = stablehlo.bitcast_convert %x : (tensor<4x8x!qx>) -> tensor<4x8xi8>
    return %f, %xs, %cat, %red : tensor<4x16xf32>, tensor<4x8xi8>, tensor<4x32x!qy>, tensor<4x!qy>
  }
}
