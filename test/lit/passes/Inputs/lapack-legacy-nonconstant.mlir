// A legacy lapack_spotrf whose lower flag is an argument, not a constant.
module @m {
  func.func public @main(%lower: tensor<i32>, %a: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %c2 = stablehlo.constant dense<2> : tensor<i32>
    %0:2 = stablehlo.custom_call @lapack_spotrf(%lower, %c1, %c2, %a) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<i32>)
    return %0#0 : tensor<2x2xf32>
  }
}
