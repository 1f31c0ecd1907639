// JAX's tridiagonal solve as jax.export writes it on CPU (jax.lax.linalg.tridiagonal_solve): lapack_sgtsv_ffi
// (dl, d, du, b) -> (dl', d', du', x, info), b column-major. library-custom-calls makes it xlac.tridiagonal_solve,
// which both backends run with the runtime's gtsv (ir/decomposition_calls.h); every output is LAPACK's.

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact | FileCheck %s --check-prefix=EXEC

// CHECK: custom-call({{.*}}), custom_call_target="xlac.tridiagonal_solve"
// CHECK-NOT: lapack_

// Batch 0: rows swap at steps 0 and 2 (|d| < |dl|); U's diagonals in d' and du', its second super-diagonal in
// dl'[1..2]; x solves A x = b (sgtsv agrees to the last bit or two). Batch 1: d[3] becomes an exact zero: info 4,
// and the outputs are gtsv's state when it returns.
// EXEC: result_0 = f32[2,4]{1,0} { { 0, 6, 1, 1 }, { 0, 1, 0, 1 } }
// EXEC: result_1 = f32[2,4]{1,0} { { 4, 1, -3, 2.75 }, { 1, 1, 1, 0 } }
// EXEC: result_2 = f32[2,4]{1,0} { { 5, 2, -0.75, 0 }, { 1, 0, 1, 0 } }
// EXEC: result_3 = f32[2,4,2]{1,2,0} { { { 1.36363637, -0.212121218 }, { 1.81818187, 0.606060624 }, { 2.909091, -0.363636374 }, { 1.36363637, 0.121212125 } }, { { 2, 1 }, { 1, 1 }, { 3, 1 }, { 1, 0 } } }
// EXEC: result_4 = s32[2]{0} {0, 4}
// EXEC: check against the interpreter: 5 of 5 outputs match

module @jit_tridiagonal_solve attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x2xf32>, tensor<2xi32>) {
    %dl = stablehlo.constant dense<[[0.0, 4.0, 1.0, 1.0], [0.0, 1.0, 0.0, 1.0]]> : tensor<2x4xf32>
    %d = stablehlo.constant dense<[[1.0, 5.0, 2.0, 3.0], [0.0, 1.0, 1.0, 1.0]]> : tensor<2x4xf32>
    %du = stablehlo.constant dense<[[2.0, 6.0, 1.0, 0.0], [1.0, 1.0, 1.0, 0.0]]> : tensor<2x4xf32>
    %b = stablehlo.constant dense<[[[5.0, 1.0], [32.0, 0.0], [9.0, 0.0], [7.0, 0.0]], [[1.0, 1.0], [2.0, 1.0], [3.0, 1.0], [4.0, 1.0]]]> : tensor<2x4x2xf32>
    %0:5 = stablehlo.custom_call @lapack_sgtsv_ffi(%dl, %d, %du, %b) {mhlo.backend_config = {}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 1, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [2], operand_index = 2, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [3], operand_index = 3, operand_tuple_indices = []>], result_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x2xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x2xf32>, tensor<2xi32>)
    return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x2xf32>, tensor<2xi32>
  }
}
