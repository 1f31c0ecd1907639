// A declared static size that the refined operands contradict (shape-poly-errors.mlir).
func.func public @main(%a: tensor<?x2xf32>) -> tensor<?x5xf32> {
  %z = stablehlo.constant dense<0> : tensor<2xi32>
  %h = stablehlo.constant dense<[0, 1]> : tensor<2xi32>
  %pv = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.dynamic_pad %a, %pv, %z, %h, %z : (tensor<?x2xf32>, tensor<f32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}
