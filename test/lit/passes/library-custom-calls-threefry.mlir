// jax.random on GPU exports its Threefry-2x32 as a custom call (cu_threefry2x32_ffi; hip_ for ROCm):
// library-custom-calls computes it in HLO, the 20 rounds JAX computes on other platforms. The three known-answer
// vectors of Random123 (Salmon et al. 2011), which JAX's own tests check: keys (0, 0), (~0, ~0) and the digits of
// pi, counters likewise.

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact | FileCheck %s --check-prefix=EXEC

// CHECK-NOT: threefry2x32
// CHECK: shift-right-logical

// 0x6b200159 0x99ba4efe, 0x1cb996fc 0xbb002be7, 0xc4923a9c 0x483df7a0:
// EXEC: result_0 = u32[3]{0} {1797259609, 481924860, 3297917596}
// EXEC: result_1 = u32[3]{0} {2579123966, 3137350631, 1212020640}
// EXEC: check against the interpreter: 2 of 2 outputs match

module @jit_threefry {
  func.func public @main() -> (tensor<3xui32>, tensor<3xui32>) {
    %k0 = stablehlo.constant dense<[0, 4294967295, 320440878]> : tensor<3xui32>
    %k1 = stablehlo.constant dense<[0, 4294967295, 57701188]> : tensor<3xui32>
    %x0 = stablehlo.constant dense<[0, 4294967295, 608135816]> : tensor<3xui32>
    %x1 = stablehlo.constant dense<[0, 4294967295, 2242054355]> : tensor<3xui32>
    %0:2 = stablehlo.custom_call @cu_threefry2x32_ffi(%k0, %k1, %x0, %x1) {mhlo.backend_config = {}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<3xui32>, tensor<3xui32>, tensor<3xui32>, tensor<3xui32>) -> (tensor<3xui32>, tensor<3xui32>)
    return %0#0, %0#1 : tensor<3xui32>, tensor<3xui32>
  }
}
