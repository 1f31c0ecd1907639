// A custom call whose `?` result nothing can refine (shape-poly-errors.mlir).
func.func public @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.custom_call @foo(%a) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
