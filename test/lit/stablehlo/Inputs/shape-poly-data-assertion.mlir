// A shape_assertion whose condition depends on the argument's values, not its shape (shape-poly-errors.mlir).
func.func public @main(%a: tensor<?xi32>) -> tensor<?xi32> {
  %0 = "stablehlo.slice"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<?xi32>) -> tensor<1xi32>
  %1 = stablehlo.reshape %0 : (tensor<1xi32>) -> tensor<i32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %ok = stablehlo.compare  GE, %1, %c,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%ok) {error_message = "never", has_side_effect = true} : (tensor<i1>) -> ()
  return %a : tensor<?xi32>
}
