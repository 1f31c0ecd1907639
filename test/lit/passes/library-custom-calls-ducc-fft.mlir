// jnp.fft in JAX's CPU exports of 2023 calls jaxlib's ducc_fft with a DuccFftDescriptor flatbuffer (dtype,
// fft_type C2C/C2R/R2C, shape, strides, axes, forward, scale): library-custom-calls makes it HLO's fft. The
// descriptors were built as jaxlib's flatbuffers lay them out; the expected values are numpy.fft's (fft, ifft,
// rfft, irfft, fft2 of x = [[1, 2, 3, 4], [0, 1, 0, 0]] and [1, 2, 3, 4]).

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact | FileCheck %s --check-prefix=EXEC

// CHECK-NOT: ducc_fft
// CHECK-DAG: c64[2,4]{1,0} fft({{.*}}), fft_type=FFT, fft_length={4}
// CHECK-DAG: c64[2,4]{1,0} fft({{.*}}), fft_type=IFFT, fft_length={4}
// CHECK-DAG: c128[3]{0} fft({{.*}}), fft_type=RFFT, fft_length={4}
// CHECK-DAG: f64[4]{0} fft({{.*}}), fft_type=IRFFT, fft_length={4}
// CHECK-DAG: c64[2,4]{1,0} fft({{.*}}), fft_type=FFT, fft_length={2,4}

// EXEC: result_0 = c64[2,4]{1,0} { { (10, 0), (-2, 2), (-2, {{[-0-9.e]+}}), (-2, -2) }, { (1, 0), ({{[-0-9.e]+}}, -1), (-1, {{[-0-9.e]+}}), ({{[-0-9.e]+}}, 1) } }
// EXEC: result_1 = c64[2,4]{1,0} { { (1, {{[-0-9.e]+}}), (2, {{[-0-9.e]+}}), (3, {{[-0-9.e]+}}), (4, {{[-0-9.e]+}}) }, { ({{[-0-9.e]+}}, {{[-0-9.e]+}}), (1, {{[-0-9.e]+}}), ({{[-0-9.e]+}}, {{[-0-9.e]+}}), (0, {{[-0-9.e]+}}) } }
// EXEC: result_2 = c128[3]{0} {(10, 0), (-2, 2), (-2, {{[-0-9.e]+}})}
// EXEC: result_3 = f64[4]{0} {1, 2, 3, 4}
// EXEC: result_4 = c64[2,4]{1,0} { { (11, 0), (-2, 1), (-3, {{[-0-9.e]+}}), (-2, -1) }, { (9, {{[-0-9.e]+}}), (-2, 3), (-1, {{[-0-9.e]+}}), (-2, -3) } }
// EXEC: check against the interpreter: 5 of 5 outputs match

module @jit_fft {
  func.func public @main() -> (tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<3xcomplex<f64>>, tensor<4xf64>, tensor<2x4xcomplex<f32>>) {
    %x = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 0.0, 0.0]]> : tensor<2x4xf32>
    %c = stablehlo.convert %x : (tensor<2x4xf32>) -> tensor<2x4xcomplex<f32>>
    // C2C forward over the last axis, then backward with scale 1/4.
    %d1 = stablehlo.constant dense<"0x18000000140028000400050008000C001000140006002000140000000000010024000000380000004C000000600000000000000000000000000000000000F03F000000000200000002000000000000000400000000000000000000000200000004000000000000000100000000000000000000000200000004000000000000000100000000000000000000000100000001000000"> : tensor<148xui8>
    %f = stablehlo.custom_call @ducc_fft(%d1, %c) {api_version = 2 : i32, operand_layouts = [dense<0> : tensor<1xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<148xui8>, tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %d2 = stablehlo.constant dense<"0x18000000140028000400050008000C001000140006002000140000000000000024000000380000004C000000600000000000000000000000000000000000D03F000000000200000002000000000000000400000000000000000000000200000004000000000000000100000000000000000000000200000004000000000000000100000000000000000000000100000001000000"> : tensor<148xui8>
    %i = stablehlo.custom_call @ducc_fft(%d2, %f) {api_version = 2 : i32, operand_layouts = [dense<0> : tensor<1xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<148xui8>, tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    // R2C forward and C2R backward of a COMPLEX128 descriptor.
    %r = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf64>
    %d3 = stablehlo.constant dense<"0x18000000140028000400050008000C001000140006002000140000000102010024000000300000003C000000480000000000000000000000000000000000F03F000000000100000004000000000000000000000001000000010000000000000000000000010000000100000000000000000000000100000000000000"> : tensor<124xui8>
    %rf = stablehlo.custom_call @ducc_fft(%d3, %r) {api_version = 2 : i32, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<124xui8>, tensor<4xf64>) -> tensor<3xcomplex<f64>>
    %d4 = stablehlo.constant dense<"0x18000000140028000400050008000C001000140006002000140000000101000024000000300000003C000000480000000000000000000000000000000000D03F000000000100000004000000000000000000000001000000010000000000000000000000010000000100000000000000000000000100000000000000"> : tensor<124xui8>
    %ir = stablehlo.custom_call @ducc_fft(%d4, %rf) {api_version = 2 : i32, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<124xui8>, tensor<3xcomplex<f64>>) -> tensor<4xf64>
    // A 2-D transform: axes (0, 1).
    %d5 = stablehlo.constant dense<"0x18000000140028000400050008000C001000140006002000140000000000010024000000380000004C000000600000000000000000000000000000000000F03F00000000020000000200000000000000040000000000000000000000020000000400000000000000010000000000000000000000020000000400000000000000010000000000000000000000020000000000000001000000"> : tensor<152xui8>
    %f2 = stablehlo.custom_call @ducc_fft(%d5, %c) {api_version = 2 : i32, operand_layouts = [dense<0> : tensor<1xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<152xui8>, tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    return %f, %i, %rf, %ir, %f2 : tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<3xcomplex<f64>>, tensor<4xf64>, tensor<2x4xcomplex<f32>>
  }
}
