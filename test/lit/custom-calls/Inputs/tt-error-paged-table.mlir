module @m {
  func.func public @main(%c: tensor<8x2x4x8xbf16>, %x: tensor<1x2x2x8xbf16>, %i: tensor<2xi32>, %t: tensor<8xi32>) -> tensor<8x2x4x8xbf16> {
    %0 = stablehlo.custom_call @tt.paged_update_cache(%c, %x, %i, %t) {api_version = 0 : i32, mhlo.frontend_attributes = {share_cache = "False"}} : (tensor<8x2x4x8xbf16>, tensor<1x2x2x8xbf16>, tensor<2xi32>, tensor<8xi32>) -> tensor<8x2x4x8xbf16>
    return %0 : tensor<8x2x4x8xbf16>
  }
}
