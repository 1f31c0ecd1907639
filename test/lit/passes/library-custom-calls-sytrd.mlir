// JAX's tridiagonal reduction as jax.export writes it on CPU (jax.lax.linalg.tridiagonal): lapack_{s,d}sytrd_ffi /
// lapack_{c,z}hetrd_ffi {uplo} a -> (a', d, e, taus, info), column-major. library-custom-calls makes them
// xlac.tridiagonal, which both backends run with the runtime's sytd2 / hetd2 (ir/decomposition_calls.h).

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact | FileCheck %s --check-prefix=EXEC

// CHECK-DAG: custom-call({{.*}}), custom_call_target="xlac.tridiagonal", backend_config="1"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="xlac.tridiagonal", backend_config="0"
// CHECK-NOT: lapack_

// LAPACK's packed form (reference ssytrd / zhetrd agree): only the named triangle is read (the 99s and 9+9i are
// never looked at, and stay); it holds d on the diagonal, e next to it and the reflectors past e; the diagonal's
// imaginary parts are dropped, as hetrd does.
// EXEC: result_0 = f32[4,4]{0,1} { { 4, 99, 99, 99 }, { -3, 3.33333325, 99, 99 }, { -0.5, -1.66666663, -1.32, 99 }, { 0.5, 0.5, 0.906666696, 1.98666668 } }
// EXEC: result_1 = f32[4]{0} {4, 3.33333325, -1.32, 1.98666668}
// EXEC: result_2 = f32[3]{0} {-3, -1.66666663, 0.906666696}
// EXEC: result_3 = f32[3]{0} {1.33333337, 1.6, 0}
// EXEC: result_4 = s32[] 0
// EXEC: result_5 = c128[3,3]{0,1} { { (2.666666666666667, 0), (1.4907119849998596, 0), (-0.15505102572168217, 0.53484692283495339) }, { (9, 9), (2.3333333333333321, 0), (-2.4494897427831783, 0) }, { (9, 9), (9, 9), (1, 0) } }
// EXEC: result_6 = f64[3]{0} {2.666666666666667, 2.3333333333333321, 1}
// EXEC: result_7 = f64[2]{0} {1.4907119849998596, -2.4494897427831783}
// EXEC: result_8 = c128[2]{0} {(1.856254299607224, -0.516554522198908), (1.4082482904638629, -0.40824829046386296)}
// EXEC: result_9 = s32[] 0
// EXEC: check against the interpreter: 10 of 10 outputs match

module @jit_tridiagonal attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<4x4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i32>, tensor<3x3xcomplex<f64>>, tensor<3xf64>, tensor<2xf64>, tensor<2xcomplex<f64>>, tensor<i32>) {
    %a = stablehlo.constant dense<[[4.0, 99.0, 99.0, 99.0], [1.0, 2.0, 99.0, 99.0], [-2.0, 0.0, 3.0, 99.0], [2.0, 1.0, -2.0, -1.0]]> : tensor<4x4xf32>
    %0:5 = stablehlo.custom_call @lapack_ssytrd_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i32>)
    %h = stablehlo.constant dense<[[(2.0, 7.0), (1.0, 1.0), (0.0, 2.0)], [(9.0, 9.0), (3.0, 0.0), (1.0, -1.0)], [(9.0, 9.0), (9.0, 9.0), (1.0, 0.0)]]> : tensor<3x3xcomplex<f64>>
    %1:5 = stablehlo.custom_call @lapack_zhetrd_ffi(%h) {mhlo.backend_config = {uplo = 85 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xcomplex<f64>>) -> (tensor<3x3xcomplex<f64>>, tensor<3xf64>, tensor<2xf64>, tensor<2xcomplex<f64>>, tensor<i32>)
    return %0#0, %0#1, %0#2, %0#3, %0#4, %1#0, %1#1, %1#2, %1#3, %1#4 : tensor<4x4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i32>, tensor<3x3xcomplex<f64>>, tensor<3xf64>, tensor<2xf64>, tensor<2xcomplex<f64>>, tensor<i32>
  }
}
