// A legacy lapack_sgetrf missing its batch descriptor.
module @m {
  func.func public @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %c2 = stablehlo.constant dense<2> : tensor<i32>
    %0:3 = stablehlo.custom_call @lapack_sgetrf(%c2, %c2, %a) {api_version = 2 : i32} : (tensor<i32>, tensor<i32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xi32>, tensor<i32>)
    return %0#0 : tensor<2x2xf32>
  }
}
