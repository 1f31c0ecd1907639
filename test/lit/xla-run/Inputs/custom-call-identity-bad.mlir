// A tt.mark_argument that changes its value's shape cannot be an identity (custom-call-identity.mlir).
module @bad {
  func.func public @main(%x: tensor<8x4xf32>) -> tensor<4x8xf32> {
    // The call is at line 5, column 5 (where its results are named).
    %0 = stablehlo.custom_call @tt.mark_argument(%x) {api_version = 0 : i32} : (tensor<8x4xf32>) -> tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
}
