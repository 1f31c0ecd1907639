// JAX's Schur decomposition as jax.export writes it on CPU (jax.lax.linalg.schur): lapack_?gees_ffi {mode, sort}
// a -> (t, vs, w, sdim, info) for complex types, (t, vs, wr, wi, sdim, info) for real types. library-custom-calls
// makes it xlac.schur, which both backends run with the runtime's gees (ir/decomposition_calls.h); sdim is 0 (sort
// 'N': nothing is selected) and vs zeros for mode 'N' (gees does not touch it).

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact | FileCheck %s --check-prefix=EXEC

// CHECK: custom-call({{.*}}), custom_call_target="xlac.schur"
// CHECK-NOT: lapack_

// sgees's real Schur form (reference LAPACK agrees to single precision): the complex pair as a standardized 2x2
// block (equal diagonal, off-diagonals of opposite signs), a = vs t vs^T; wr and wi from the blocks.
// EXEC: result_0 = f32[4,4]{0,1} { { 0.646868825, -4.07732773, -3.23673606, -2.20122814 }, { 1.98178, 0.646868825, -0.239453241, -0.062239036 }, { 0, 0, 3, 1.70415187 }, { 0, 0, 0, 2.70626235 } }
// EXEC: result_1 = f32[4,4]{0,1} { { 0.138729349, -0.966850519, 0.184653103, 0.108892091 }, { -0.982537389, -0.11211, 0.0758957118, 0.127638161 }, { -0.060566552, 0.0132409064, 0.589694619, -0.805243194 }, { 0.108195052, 0.229033008, 0.782562, 0.56871295 } }
// EXEC: result_2 = f32[4]{0} {0.646868825, 0.646868825, 3, 2.70626235}
// EXEC: result_3 = f32[4]{0} {2.84259868, -2.84259868, 0, 0}
// EXEC: result_4 = s32[] 0
// EXEC: result_5 = s32[] 0
// zgees with mode 'N': t upper triangular, the eigenvalues its diagonal.
// EXEC: result_6 = c128[2,2]{0,1} { { (-0.45869235757412052, 0.765817048399464), (0.17405313202869421, 1.6198155761548709) }, { (0, 0), (3.4586923575741206, -0.76581704839946374) } }
// EXEC: result_7 = c128[2,2]{0,1} { { (0, 0), (0, 0) }, { (0, 0), (0, 0) } }
// EXEC: result_8 = c128[2]{0} {(-0.45869235757412052, 0.765817048399464), (3.4586923575741206, -0.76581704839946374)}
// EXEC: check against the interpreter: 11 of 11 outputs match

module @jit_schur attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i32>, tensor<i32>, tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>>, tensor<2xcomplex<f64>>, tensor<i32>, tensor<i32>) {
    %a = stablehlo.constant dense<[[1.0, 2.0, 0.0, 0.0], [-3.0, 1.0, 0.0, 5.0], [0.0, 0.0, 2.0, 1.0], [1.0, 0.0, -1.0, 3.0]]> : tensor<4x4xf32>
    %0:6 = stablehlo.custom_call @lapack_sgees_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i32>, tensor<i32>)
    %c = stablehlo.constant dense<[[(0.0, 1.0), (2.0, 0.0)], [(1.0, 0.0), (3.0, -1.0)]]> : tensor<2x2xcomplex<f64>>
    %1:5 = stablehlo.custom_call @lapack_zgees_ffi(%c) {mhlo.backend_config = {mode = 78 : ui8, sort = 78 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xcomplex<f64>>) -> (tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>>, tensor<2xcomplex<f64>>, tensor<i32>, tensor<i32>)
    return %0#0, %0#1, %0#2, %0#3, %0#4, %0#5, %1#0, %1#1, %1#2, %1#3, %1#4 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i32>, tensor<i32>, tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>>, tensor<2xcomplex<f64>>, tensor<i32>, tensor<i32>
  }
}
