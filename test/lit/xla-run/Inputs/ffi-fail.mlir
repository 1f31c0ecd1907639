module @ffi_fail {
  func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %s = stablehlo.custom_call @xlac_test_scale(%x) {api_version = 4 : i32, mhlo.backend_config = {alpha = 2.0 : f32}} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %f = stablehlo.custom_call @xlac_test_fail(%s) {api_version = 4 : i32, mhlo.backend_config = {reason = "the operand is not a permutation"}} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    return %f : tensor<2x2xf32>
  }
}
