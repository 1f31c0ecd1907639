module @ffi_missing {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %s = stablehlo.custom_call @xlac_test_scale(%x) {api_version = 4 : i32, mhlo.backend_config = {alpha = 2.0 : f32}} : (tensor<4xf32>) -> tensor<4xf32>
    %m = stablehlo.custom_call @tt.sparse_matmul(%s) {api_version = 4 : i32} : (tensor<4xf32>) -> tensor<4xf32>
    return %m : tensor<4xf32>
  }
}
