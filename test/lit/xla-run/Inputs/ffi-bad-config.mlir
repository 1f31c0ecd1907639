module @ffi_bad_config {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %s = stablehlo.custom_call @xlac_test_scale(%x) {api_version = 4 : i32, mhlo.backend_config = {alpha = 2.0 : f16}} : (tensor<4xf32>) -> tensor<4xf32>
    return %s : tensor<4xf32>
  }
}
