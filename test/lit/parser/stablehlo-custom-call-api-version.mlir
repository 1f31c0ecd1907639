// A StableHLO custom_call with api_version = 0 (API_VERSION_UNSPECIFIED, as PyTorch/XLA writes it) lowers to the
// original API, which HLO text leaves implicit: XLA's own StableHLO->HLO export would keep UNSPECIFIED and print
// `api_version=API_VERSION_UNSPECIFIED`, which XLA's HLO parser (and xlac's) rejects. The other versions keep their
// names, and the printed module parses again.

// RUN: xla-opt %s --print-short | FileCheck %s
// RUN: xla-opt %s --print-short | xla-opt - --print-short | FileCheck %s

// CHECK:      = f32[2]{0} custom-call({{[^)]*}}), custom_call_target="zero"{{$}}
// CHECK-NEXT: = f32[2]{0} custom-call({{[^)]*}}), custom_call_target="one"{{$}}
// CHECK-NEXT: = f32[2]{0} custom-call({{[^)]*}}), custom_call_target="two", api_version=API_VERSION_STATUS_RETURNING{{$}}
// CHECK-NOT:  API_VERSION_UNSPECIFIED

module @api_versions {
  func.func public @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
    %0 = stablehlo.custom_call @zero(%x) {api_version = 0 : i32} : (tensor<2xf32>) -> tensor<2xf32>
    %1 = stablehlo.custom_call @one(%x) {api_version = 1 : i32} : (tensor<2xf32>) -> tensor<2xf32>
    %2 = stablehlo.custom_call @two(%x) {api_version = 2 : i32} : (tensor<2xf32>) -> tensor<2xf32>
    return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
}
