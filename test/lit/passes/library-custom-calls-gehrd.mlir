// JAX's Hessenberg reduction as jax.export writes it on CPU (jax.lax.linalg.hessenberg): lapack_?gehrd_ffi
// {low, high} a -> (a', taus[n-1], info), column-major. library-custom-calls makes it xlac.hessenberg, which both
// backends run with the runtime's gehd2 (ir/decomposition_calls.h); info is always 0, as gehrd's for valid arguments.

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact | FileCheck %s --check-prefix=EXEC

// CHECK-DAG: custom-call({{.*}}), custom_call_target="xlac.hessenberg", backend_config="1,4"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="xlac.hessenberg", backend_config="1,3"
// CHECK-NOT: lapack_

// LAPACK's packed form (reference sgehrd / cgehrd agree to single precision): H on and above the sub-diagonal,
// larfg's reflectors below it (v[i+1] = 1 implied), their scales in taus; the sub-diagonal is real (larfg's beta).
// EXEC: result_0 = f32[4,4]{0,1} { { 4, -3, 0, 0 }, { -3, 3.33333325, -1.66666663, 0 }, { -0.5, -1.66666663, -1.32, 0.906666696 }, { 0.5, 0.5, 0.906666696, 1.98666668 } }
// EXEC: result_1 = f32[3]{0} {1.33333337, 1.6, 0}
// EXEC: result_2 = s32[] 0
// EXEC: result_3 = c64[3,3]{0,1} { { (1, 1), (-0.4, 0), (0, 2.2) }, { (-5, 0), (1, 0.44), (-3.08, 0) }, { (0, 0.5), (0.08, 0), (1, 0.56) } }
// EXEC: result_4 = c64[2]{0} {(1.6, 0), (0, 0)}
// EXEC: check against the interpreter: 6 of 6 outputs match

module @jit_hessenberg attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<4x4xf32>, tensor<3xf32>, tensor<i32>, tensor<3x3xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<i32>) {
    %a = stablehlo.constant dense<[[4.0, 1.0, -2.0, 2.0], [1.0, 2.0, 0.0, 1.0], [-2.0, 0.0, 3.0, -2.0], [2.0, 1.0, -2.0, -1.0]]> : tensor<4x4xf32>
    %0:3 = stablehlo.custom_call @lapack_sgehrd_ffi(%a) {mhlo.backend_config = {high = 4 : i32, low = 1 : i32}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<3xf32>, tensor<i32>)
    %c = stablehlo.constant dense<[[(1.0, 1.0), (2.0, 0.0), (0.0, 1.0)], [(3.0, 0.0), (1.0, -1.0), (1.0, 0.0)], [(0.0, 4.0), (2.0, 0.0), (1.0, 2.0)]]> : tensor<3x3xcomplex<f32>>
    %1:3 = stablehlo.custom_call @lapack_cgehrd_ffi(%c) {mhlo.backend_config = {high = 3 : i32, low = 1 : i32}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<i32>)
    return %0#0, %0#1, %0#2, %1#0, %1#1, %1#2 : tensor<4x4xf32>, tensor<3xf32>, tensor<i32>, tensor<3x3xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<i32>
  }
}
