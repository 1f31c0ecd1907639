// lapack_sgehrd_ffi with high past n.
module @m {
  func.func public @main(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
    %0:3 = stablehlo.custom_call @lapack_sgehrd_ffi(%a) {mhlo.backend_config = {high = 4 : i32, low = 1 : i32}} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<2xf32>, tensor<i32>)
    return %0#0 : tensor<3x3xf32>
  }
}
