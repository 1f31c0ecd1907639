// jaxlib's dynamic_ducc_fft (shape-polymorphic CPU exports of mid-2023): a DynamicDuccFftDescriptor (ndims, dtype,
// fft_type, axes, forward) and the shape, strides and scale as operands, which fold to constants once the shapes are
// static. JAX's own back-compat module (export_back_compat_test_data/cpu_ducc_fft.py, data_2023_06_14, locations
// dropped): jnp.fft.fft of [[0..3], [4..7], [8..11]], whose expected values in that file are
// [[6, -2+2j, -2, -2-2j], [22, ...], [38, ...]].

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact | FileCheck %s --check-prefix=EXEC

// CHECK-NOT: ducc_fft
// CHECK: c64[3,4]{1,0} fft({{.*}}), fft_type=FFT, fft_length={4}

// EXEC: result_0 = c64[3,4]{1,0} { { (6, 0), (-2, 2), (-2, {{[-0-9.e]+}}), (-2, -2) }, { (22, 0), (-2, 2), (-2, {{[-0-9.e]+}}), (-2, -2) }, { (38, 0), (-2, 2), (-2, {{[-0-9.e]+}}), (-2, -2) } }
// EXEC: check against the interpreter: 1 of 1 output match

module @jit_func attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<3x4xcomplex<f32>> {jax.result_info = ""}) {
    %x = stablehlo.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]> : tensor<3x4xf32>
    %0 = call @fft(%x) : (tensor<3x4xf32>) -> tensor<3x4xcomplex<f32>>
    return %0 : tensor<3x4xcomplex<f32>>
  }
  func.func private @fft(%arg0: tensor<3x4xf32>) -> tensor<3x4xcomplex<f32>> {
    %0 = stablehlo.convert %arg0 : (tensor<3x4xf32>) -> tensor<3x4xcomplex<f32>>
    %1 = stablehlo.constant dense<4> : tensor<i64>
    %2 = stablehlo.constant dense<1> : tensor<i64>
    %3 = stablehlo.convert %1 : (tensor<i64>) -> tensor<i32>
    %4 = stablehlo.reshape %3 : (tensor<i32>) -> tensor<1xi32>
    %5 = stablehlo.convert %2 : (tensor<i64>) -> tensor<i32>
    %6 = stablehlo.reshape %5 : (tensor<i32>) -> tensor<1xi32>
    %7 = stablehlo.concatenate %4, %6, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %8 = stablehlo.constant dense<4> : tensor<i64>
    %9 = stablehlo.constant dense<1> : tensor<i64>
    %10 = stablehlo.convert %8 : (tensor<i64>) -> tensor<i32>
    %11 = stablehlo.reshape %10 : (tensor<i32>) -> tensor<1xi32>
    %12 = stablehlo.convert %9 : (tensor<i64>) -> tensor<i32>
    %13 = stablehlo.reshape %12 : (tensor<i32>) -> tensor<1xi32>
    %14 = stablehlo.concatenate %11, %13, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %15 = stablehlo.constant dense<4> : tensor<i64>
    %16 = stablehlo.convert %15 : (tensor<i64>) -> tensor<f64>
    %17 = stablehlo.constant dense<1.000000e+00> : tensor<f64>
    %18 = stablehlo.reshape %17 : (tensor<f64>) -> tensor<1xf64>
    %19 = stablehlo.constant dense<3> : tensor<i64>
    %20 = stablehlo.constant dense<4> : tensor<i64>
    %21 = stablehlo.convert %19 : (tensor<i64>) -> tensor<i32>
    %22 = stablehlo.reshape %21 : (tensor<i32>) -> tensor<1xi32>
    %23 = stablehlo.convert %20 : (tensor<i64>) -> tensor<i32>
    %24 = stablehlo.reshape %23 : (tensor<i32>) -> tensor<1xi32>
    %25 = stablehlo.concatenate %22, %24, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %32 = stablehlo.concatenate %22, %24, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %33 = stablehlo.constant dense<[20, 0, 0, 0, 0, 0, 14, 0, 16, 0, 8, 0, 0, 0, 0, 0, 12, 0, 7, 0, 14, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]> : tensor<44xui8>
    %34 = stablehlo.custom_call @dynamic_ducc_fft(%33, %0, %25, %7, %14, %18, %32) {api_version = 2 : i32, indices_of_shape_operands = dense<6> : tensor<1xi64>, operand_layouts = [dense<0> : tensor<1xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<44xui8>, tensor<3x4xcomplex<f32>>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<1xf64>, tensor<2xi32>) -> tensor<3x4xcomplex<f32>>
    return %34 : tensor<3x4xcomplex<f32>>
  }
}
