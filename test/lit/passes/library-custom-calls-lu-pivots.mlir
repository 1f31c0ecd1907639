// lax.linalg.lu_pivots_to_permutation in JAX's GPU exports is a jaxlib custom call (cu_ / hip_ with the typed FFI,
// cuda_ before 2024): library-custom-calls computes it as a while loop of swaps. Each row of pivots applies the
// swaps i <-> pivots[i] in order to the identity; a pivot outside [0, m) is skipped, as jaxlib's kernel does.
// Expected values by hand (and a numpy replay of the swaps): [2,2,3,3] -> [2,0,3,1]; [1,0,3,2] undoes itself;
// [3,-1,7,3] swaps only 0 <-> 3; [4,4,4] on 5 elements -> [4,0,1,3,2].

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter | FileCheck %s --check-prefix=EXEC

// CHECK-NOT: pivots_to_permutation
// CHECK: while(

// EXEC: result_0 = s32[3,4]{1,0} { { 2, 0, 3, 1 }, { 0, 1, 2, 3 }, { 3, 1, 2, 0 } }
// EXEC: result_1 = s32[5]{0} {4, 0, 1, 3, 2}
// EXEC: result_2 = s32[5]{0} {4, 0, 1, 3, 2}
// EXEC: check against the interpreter: 3 of 3 outputs match

module @jit_lu_pivots {
  func.func public @main() -> (tensor<3x4xi32>, tensor<5xi32>, tensor<5xi32>) {
    %p = stablehlo.constant dense<[[2, 2, 3, 3], [1, 0, 3, 2], [3, -1, 7, 3]]> : tensor<3x4xi32>
    %0 = stablehlo.custom_call @cu_lu_pivots_to_permutation(%p) {mhlo.backend_config = {permutation_size = 4 : i32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<3x4xi32>) -> tensor<3x4xi32>
    %q = stablehlo.constant dense<[4, 4, 4]> : tensor<3xi32>
    %1 = stablehlo.custom_call @hip_lu_pivots_to_permutation(%q) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<3xi32>) -> tensor<5xi32>
    %2 = stablehlo.custom_call @cuda_lu_pivots_to_permutation(%q) {api_version = 2 : i32, backend_config = "\01\00\00\00\03\00\00\00\05\00\00\00", operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<3xi32>) -> tensor<5xi32>
    return %0, %1, %2 : tensor<3x4xi32>, tensor<5xi32>, tensor<5xi32>
  }
}
