// A static result type that the shape operand contradicts (shape-poly-errors.mlir).
func.func public @main(%a: tensor<?x2xf32>) -> tensor<5xf32> {
  %n = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x2xf32>) -> tensor<i32>
  %s = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %0 = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
