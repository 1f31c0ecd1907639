// JAX's eig as jax.export writes it on CPU (jax.lax.linalg.eig): lapack_?geev_ffi {compute_left, compute_right}
// a -> (w, vl, vr, info) for complex types, (wr, wi, vl, vr, info) with complex vl and vr for real types.
// library-custom-calls makes it xlac.eig, which both backends run with the runtime's geev (balancing, Hessenberg
// reduction, the QR iteration, trevc's back-substitution: ir/decomposition_calls.h).

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact | FileCheck %s --check-prefix=EXEC

// CHECK-DAG: custom-call({{.*}}), custom_call_target="xlac.eig", backend_config="1,1"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="xlac.eig", backend_config="0,1"
// CHECK-NOT: lapack_

// dgeev's conventions (reference LAPACK gives these same vectors, signs included): the complex pair first with the
// positive imaginary part first, its vectors conjugate with the largest component real; the real eigenvalues'
// vectors real (the eigenvalue 3's is (1, 1, 1, 1) / 2); every vector of unit norm; u^H A = w u^H for vl.
// EXEC: result_0 = f64[4]{0} {0.64686882783665856, 0.64686882783665856, 3.0000000000000022, 2.7062623443266807}
// EXEC: result_1 = f64[4]{0} {2.8425986735005422, -2.8425986735005422, 0, 0}
// EXEC: result_2 = c128[4,4]{0,1} { { (-0.627276659043021, 0), (-0.627276659043021, -0), (0.13867504905630748, 0), (0.1088920905879046, 0) }, { (0.053993682711962566, -0.43463274543046904), (0.053993682711962566, 0.43463274543046904),
// EXEC: result_3 = c128[4,4]{0,1} { { (-0.069596302120542131, -0.56022909242599561), (-0.069596302120542131, 0.56022909242599561), (0.49999999999999989, 0), (-0.4930245049301914, 0) }, { (0.80854154936630507, 0), (0.80854154936630507, -0),
// EXEC: result_4 = s32[] 0
// cgeev without left vectors (zeros); the right ones with their largest component real and positive, as cgeev's.
// EXEC: result_5 = c64[2]{0} {(-0.458692372, 0.765817046), (3.45869231, -0.765817046)}
// EXEC: result_6 = c64[2,2]{0,1} { { (0, 0), (0, 0) }, { (0, 0), (0, 0) } }
// EXEC: result_7 = c64[2,2]{0,1} { { (0.968407691, 0), (0.407788515, 0.208194271) }, { (-0.222100616, -0.113392286), (0.889024, 0) } }
// EXEC: result_8 = s32[] 0
// EXEC: check against the interpreter: 9 of 9 outputs match

module @jit_eig attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<4xf64>, tensor<4xf64>, tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<i32>, tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>, tensor<2x2xcomplex<f32>>, tensor<i32>) {
    %a = stablehlo.constant dense<[[1.0, 2.0, 0.0, 0.0], [-3.0, 1.0, 0.0, 5.0], [0.0, 0.0, 2.0, 1.0], [1.0, 0.0, -1.0, 3.0]]> : tensor<4x4xf64>
    %0:5 = stablehlo.custom_call @lapack_dgeev_ffi(%a) {mhlo.backend_config = {compute_left = 86 : ui8, compute_right = 86 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<4x4xf64>) -> (tensor<4xf64>, tensor<4xf64>, tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<i32>)
    %c = stablehlo.constant dense<[[(0.0, 1.0), (2.0, 0.0)], [(1.0, 0.0), (3.0, -1.0)]]> : tensor<2x2xcomplex<f32>>
    %1:4 = stablehlo.custom_call @lapack_cgeev_ffi(%c) {mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xcomplex<f32>>) -> (tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>, tensor<2x2xcomplex<f32>>, tensor<i32>)
    return %0#0, %0#1, %0#2, %0#3, %0#4, %1#0, %1#1, %1#2, %1#3 : tensor<4xf64>, tensor<4xf64>, tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<i32>, tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>, tensor<2x2xcomplex<f32>>, tensor<i32>
  }
}
