// JAX's CPU linear algebra as jax.export wrote it in 2023 (jaxlib's legacy API, api_version 2): targets without
// _ffi, scalar descriptor operands (flags as 0/1, sizes, workspace sizes) before the arrays, workspaces among the
// results. library-custom-calls reads the flags from the constant descriptors and rewrites the calls as it does the
// typed-FFI ones (library-custom-calls-decompositions.mlir: the same matrices give the same results here); the
// workspaces and the infos LAPACK always sets to 0 become zeros. A descriptor may be i64 (getrf's batch here).

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact | FileCheck %s --check-prefix=EXEC

// CHECK-DAG: cholesky({{.*}}), lower=true
// CHECK-DAG: custom-call({{.*}}), custom_call_target="LuDecomposition"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="Qr"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="ProductOfElementaryHouseholderReflectors"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="Eigh", backend_config="1,1"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="xlac.svd"
// CHECK-DAG: triangular-solve({{.*}}), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
// CHECK-NOT: lapack_
// CHECK-NOT: blas_

// potrf (lower = 1): L of [[4, 2], [2, 3]], the upper triangle a's own; info 0.
// EXEC: result_0 = f32[2,2]{0,1} { { 2, 2 }, { 1, 1.41421354 } }
// EXEC: result_1 = s32[] 0
// EXEC: result_2 = f32[2,2]{0,1} { { 3, 4 }, { 0.333333343, 0.666666687 } }
// EXEC: result_3 = s32[2]{0} {2, 2}
// EXEC: result_4 = s32[] 0
// EXEC: result_5 = f32[2,2]{0,1} { { -5, -2.2 }, { 0.5, 0.4 } }
// EXEC: result_6 = f32[2]{0} {1.6, 0}
// EXEC: result_7 = f32[2,2]{0,1} { { -0.6, -0.8 }, { -0.8, 0.6 } }
// EXEC: result_9 = f32[2]{0} {1, 3}
// EXEC: result_10 = s32[] 0
// EXEC: result_11 = f32[2]{0} {4, 3}
// EXEC: result_12 = f32[2,2]{0,1} { { 0, 1 }, { -1, 0 } }
// EXEC: result_13 = f32[2,2]{0,1} { { 0, 1 }, { 1, 0 } }
// blas_strsm (left_side, lower, no transpose, non-unit, alpha 2): [[2, 0], [1, 4]] x = 2 [[2, 4], [5, 6]].
// EXEC: result_14 = f32[2,2]{0,1} { { 2, 4 }, { 2, 2 } }
// In mid-2024 jaxlib briefly wrote the typed-FFI call under the old name (lapack_sgetrf(a), no descriptors): the
// typed-FFI form, whatever the name.
// EXEC: result_15 = f32[2,2]{0,1} { { 3, 4 }, { 0.333333343, 0.666666687 } }
// EXEC: result_16 = s32[2]{0} {2, 2}
// EXEC: check against the interpreter: 17 of 17 outputs match

module @jit_legacy attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<2x2xf32>, tensor<i32>, tensor<2x2xf32>, tensor<2xi32>, tensor<i32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<i32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xi32>) {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %c2 = stablehlo.constant dense<2> : tensor<i32>
    %b64 = stablehlo.constant dense<1> : tensor<i64>
    %lwork = stablehlo.constant dense<64> : tensor<i32>
    %p = stablehlo.constant dense<[[4.0, 2.0], [2.0, 3.0]]> : tensor<2x2xf32>
    %0:2 = stablehlo.custom_call @lapack_spotrf(%c1, %c1, %c2, %p) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 3, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<i32>)
    %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %1:3 = stablehlo.custom_call @lapack_sgetrf(%b64, %c2, %c2, %a) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 3, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<i64>, tensor<i32>, tensor<i32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xi32>, tensor<i32>)
    %q = stablehlo.constant dense<[[3.0, 1.0], [4.0, 2.0]]> : tensor<2x2xf32>
    %2:4 = stablehlo.custom_call @lapack_sgeqrf(%c1, %c2, %c2, %lwork, %q) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 4, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>, tensor<64xf32>)
    %3:3 = stablehlo.custom_call @lapack_sorgqr(%c1, %c2, %c2, %c2, %lwork, %2#0, %2#1) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 5, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<2x2xf32>, tensor<2xf32>) -> (tensor<2x2xf32>, tensor<i32>, tensor<64xf32>)
    %s = stablehlo.constant dense<[[2.0, 1.0], [1.0, 2.0]]> : tensor<2x2xf32>
    %4:5 = stablehlo.custom_call @lapack_ssyevd(%c1, %c1, %c2, %s) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 3, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>, tensor<13xf32>, tensor<13xi32>)
    %d = stablehlo.constant dense<[[3.0, 0.0], [0.0, -4.0]]> : tensor<2x2xf32>
    %5:7 = stablehlo.custom_call @lapack_sgesdd(%c1, %c1, %c1, %c2, %c2, %lwork, %d) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 6, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<i32>, tensor<16xi32>, tensor<64xf32>)
    %alpha = stablehlo.constant dense<2.0> : tensor<f32>
    %t = stablehlo.constant dense<[[2.0, 0.0], [1.0, 4.0]]> : tensor<2x2xf32>
    %rhs = stablehlo.constant dense<[[2.0, 4.0], [5.0, 6.0]]> : tensor<2x2xf32>
    %6 = stablehlo.custom_call @blas_strsm(%c1, %c1, %c0, %c0, %c2, %c2, %c1, %alpha, %t, %rhs) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 9, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %7:3 = stablehlo.custom_call @lapack_sgetrf(%a) {mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xi32>, tensor<i32>)
    return %0#0, %0#1, %1#0, %1#1, %1#2, %2#0, %2#1, %3#0, %4#0, %4#1, %4#2, %5#1, %5#2, %5#3, %6, %7#0, %7#1 : tensor<2x2xf32>, tensor<i32>, tensor<2x2xf32>, tensor<2xi32>, tensor<i32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<i32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xi32>
  }
}
