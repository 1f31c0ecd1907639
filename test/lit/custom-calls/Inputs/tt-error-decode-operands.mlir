module @m {
  func.func public @main(%q: tensor<1x2x4x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>, %p: tensor<2xi32>) -> tensor<1x2x4x8xf32> {
    %0 = stablehlo.custom_call @tt.scaled_dot_product_attention_decode(%q, %k, %v, %p) {api_version = 0 : i32, mhlo.frontend_attributes = {has_attention_mask = "True", has_attention_sink = "False", is_causal = "False"}} : (tensor<1x2x4x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2xi32>) -> tensor<1x2x4x8xf32>
    return %0 : tensor<1x2x4x8xf32>
  }
}
