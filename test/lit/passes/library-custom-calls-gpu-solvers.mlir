// JAX's GPU exports call cuSOLVER / hipSOLVER through the typed FFI (cusolver_<routine>_ffi, hipsolver_...) with
// LAPACK's signatures and column-major buffers, the triangle as `lower = true`: library-custom-calls rewrites them
// as the CPU calls. By hand: getrf of [[2, 1], [4, 4]] pivots on row 2 (ipiv 1-based [2, 2]): LU = [[4, 4],
// [0.5, -1]], and JAX's lu_pivots_to_permutation of ipiv - 1 gives [1, 0]; potrf (lower) of [[4, 2], [2, 5]] is
// L = [[2, 0], [1, 2]] with the upper triangle the input's; syevd of [[2, 0], [0, 1]] has eigenvalues [1, 2].

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter | FileCheck %s --check-prefix=EXEC

// CHECK-NOT: solver_
// CHECK-DAG: custom_call_target="LuDecomposition"
// CHECK-DAG: cholesky(
// CHECK-DAG: custom_call_target="Eigh"

// EXEC: result_0 = f32[2,2]{0,1} { { 4, 4 }, { 0.5, -1 } }
// EXEC: result_1 = s32[2]{0} {2, 2}
// EXEC: result_2 = s32[] 0
// EXEC: result_3 = s32[2]{0} {1, 0}
// EXEC: result_4 = f64[2,2]{0,1} { { 2, 2 }, { 1, 2 } }
// EXEC: result_5 = f32[2]{0} {1, 2}
// EXEC: check against the interpreter: 6 of 6 outputs match

module @jit_gpu_linalg {
  func.func public @main() -> (tensor<2x2xf32>, tensor<2xi32>, tensor<i32>, tensor<2xi32>, tensor<2x2xf64>, tensor<2xf32>) {
    %a = stablehlo.constant dense<[[2.0, 1.0], [4.0, 4.0]]> : tensor<2x2xf32>
    %0:3 = stablehlo.custom_call @cusolver_getrf_ffi(%a) {mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xi32>, tensor<i32>)
    %one = stablehlo.constant dense<1> : tensor<2xi32>
    %pivots = stablehlo.subtract %0#1, %one : tensor<2xi32>
    %perm = stablehlo.custom_call @cu_lu_pivots_to_permutation(%pivots) {mhlo.backend_config = {}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<2xi32>) -> tensor<2xi32>
    %s = stablehlo.constant dense<[[4.0, 2.0], [2.0, 5.0]]> : tensor<2x2xf64>
    %1:2 = stablehlo.custom_call @hipsolver_potrf_ffi(%s) {mhlo.backend_config = {lower = true}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf64>) -> (tensor<2x2xf64>, tensor<i32>)
    %h = stablehlo.constant dense<[[2.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
    %2:3 = stablehlo.custom_call @cusolver_syevd_ffi(%h) {mhlo.backend_config = {algorithm = 0 : ui8, lower = true}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>)
    return %0#0, %0#1, %0#2, %perm, %1#0, %2#1 : tensor<2x2xf32>, tensor<2xi32>, tensor<i32>, tensor<2xi32>, tensor<2x2xf64>, tensor<2xf32>
  }
}
