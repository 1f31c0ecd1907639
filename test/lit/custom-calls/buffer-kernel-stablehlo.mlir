// A buffer kernel called from StableHLO: the attributes come from the mhlo.backend_config dictionary (typed values,
// as JAX writes them), and the two results are the call's results.

// RUN: xla-run %s --custom-call-src=%S/Inputs/buffer_kernels.cc --check-against=interpreter --exact | FileCheck %s
// CHECK: result_0 = f32[2,2]{1,0} { { 3, 2.5 }, { 1.5, 0.5 } }
// CHECK-NEXT: result_1 = s32[2,2]{1,0} { { 1, 2 }, { 0, 2 } }
// CHECK: check against the interpreter: 2 of 2 outputs match

// A value of the wrong kind in the dictionary: an error at the call, a note at the field.
// RUN: sed 's/k = 2 : i32/k = true/' %s > %t.mlir
// RUN: not xla-run %t.mlir --custom-call-src=%S/Inputs/buffer_kernels.cc 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: attribute 'k' of custom call {{.*}} is true, but the kernel's field is s32: s32 takes an integer
// BAD: buffer_kernels.cc:8:11: note: attribute 'k' of TopK is declared here

module @m {
  func.func @main() -> (tensor<2x2xf32>, tensor<2x2xi32>) {
    %x = stablehlo.constant dense<[[2.0, 6.0, 5.0], [3.0, -1.0, 1.0]]> : tensor<2x3xf32>
    %r:2 = stablehlo.custom_call @test.topk(%x) {mhlo.backend_config = {k = 2 : i32, scale = 5.000000e-01 : f32}} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
    return %r#0, %r#1 : tensor<2x2xf32>, tensor<2x2xi32>
  }
}
