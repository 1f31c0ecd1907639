// JAX's CPU decompositions as jax.export writes them (typed-FFI LAPACK calls, flags as ASCII codes, column-major
// layouts): library-custom-calls turns getrf, geqrf, orgqr, syevd and gesdd into the decomposition calls both
// backends run with the runtime's kernels (ir/decomposition_calls.h), pivots 1-based as LAPACK's.

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact | FileCheck %s --check-prefix=EXEC

// CHECK-DAG: custom-call({{.*}}), custom_call_target="LuDecomposition"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="Qr"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="ProductOfElementaryHouseholderReflectors"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="Eigh", backend_config="1,1"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="xlac.svd"
// CHECK-NOT: lapack_

// getrf of [[1, 2], [3, 4]]: row 2 is the first pivot; L = [[1, 0], [1/3, 1]], U = [[3, 4], [0, 2/3]].
// EXEC: result_0 = f32[2,2]{0,1} { { 3, 4 }, { 0.333333343, 0.666666687 } }
// EXEC: result_1 = s32[2]{0} {2, 2}
// EXEC: result_2 = s32[] 0
// geqrf of [[3, 1], [4, 2]]: R = [[-5, -2.2], [., 0.4]] with v_0 = (1, 0.5) below it, taus (1.6, 0); orgqr: Q.
// EXEC: result_3 = f32[2,2]{0,1} { { -5, -2.2 }, { 0.5, 0.4 } }
// EXEC: result_4 = f32[2]{0} {1.6, 0}
// EXEC: result_5 = f32[2,2]{0,1} { { -0.6, -0.8 }, { -0.8, 0.6 } }
// syevd of [[2, 1], [1, 2]]: eigenvalues ascending; gesdd of diag(3, -4): singular values descending.
// EXEC: result_7 = f32[2]{0} {1, 3}
// EXEC: result_8 = s32[] 0
// EXEC: result_9 = f32[2]{0} {4, 3}
// EXEC: result_10 = f32[2,2]{0,1} { { 0, 1 }, { -1, 0 } }
// EXEC: result_11 = f32[2,2]{0,1} { { 0, 1 }, { 1, 0 } }
// EXEC: check against the interpreter: 13 of 13 outputs match

module @jit_decompositions attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<2x2xf32>, tensor<2xi32>, tensor<i32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<i32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<i32>) {
    %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %0:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%a) {mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xi32>, tensor<i32>)
    %b = stablehlo.constant dense<[[3.0, 1.0], [4.0, 2.0]]> : tensor<2x2xf32>
    %1:2 = stablehlo.custom_call @lapack_sgeqrf_ffi(%b) {mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>)
    %2 = stablehlo.custom_call @lapack_sorgqr_ffi(%1#0, %1#1) {mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
    %c = stablehlo.constant dense<[[2.0, 1.0], [1.0, 2.0]]> : tensor<2x2xf32>
    %3:3 = stablehlo.custom_call @lapack_ssyevd_ffi(%c) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>)
    %d = stablehlo.constant dense<[[3.0, 0.0], [0.0, -4.0]]> : tensor<2x2xf32>
    %4:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%d) {mhlo.backend_config = {mode = 65 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<i32>)
    return %0#0, %0#1, %0#2, %1#0, %1#1, %2, %3#0, %3#1, %3#2, %4#1, %4#2, %4#3, %4#4 : tensor<2x2xf32>, tensor<2xi32>, tensor<i32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<i32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<i32>
  }
}
