// XLA's ApproxTopK (jax.lax.approx_max_k as a TPU export writes it) runs as XLA runs it off TPU: an exact top-k, a
// stable sort by the call's comparator and a slice of the first top_k along reduction_dim.

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact | FileCheck %s --check-prefix=EXEC

// CHECK: sort({{.*}}), dimensions={1}, is_stable=true, to_apply=top_k_gt_comparator
// CHECK: slice({{.*}}), slice={[0:2], [0:3]}
// CHECK-NOT: ApproxTopK

// EXEC: result_0 = f32[2,3]{1,0} { { 7, 6, 5 }, { 9, 8, 2 } }
// EXEC: result_1 = s32[2,3]{1,0} { { 6, 5, 4 }, { 0, 3, 1 } }
// EXEC: check against the interpreter: 2 of 2 outputs match

module @jit__lambda_ {
  func.func private @top_k_gt_comparator(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<i32>) -> tensor<i1> {
    %0 = stablehlo.compare  GT, %arg0, %arg1 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    return %0 : tensor<i1>
  }
  func.func public @main() -> (tensor<2x3xf32>, tensor<2x3xi32>) {
    %0 = stablehlo.constant dense<[[3.0, 1.0, 4.0, 2.0, 5.0, 6.0, 7.0], [9.0, 2.0, 1.0, 8.0, -1.0, 0.0, 2.0]]> : tensor<2x7xf32>
    %1 = stablehlo.iota dim = 1 : tensor<2x7xi32>
    %2 = stablehlo.constant dense<-1> : tensor<i32>
    %4 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %5:2 = stablehlo.custom_call @ApproxTopK(%0, %1, %4, %2) {called_computations = [@top_k_gt_comparator], mhlo.backend_config = {aggregate_to_topk = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 3 : i64}} : (tensor<2x7xf32>, tensor<2x7xi32>, tensor<f32>, tensor<i32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
    return %5#0, %5#1 : tensor<2x3xf32>, tensor<2x3xi32>
  }
}
