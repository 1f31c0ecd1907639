module @m {
  func.func public @main(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
    %0 = stablehlo.custom_call @tt.scaled_dot_product_attention(%q, %k, %v) {api_version = 0 : i32, mhlo.frontend_attributes = {is_causal = "yes"}} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
    return %0 : tensor<1x2x4x8xf32>
  }
}
