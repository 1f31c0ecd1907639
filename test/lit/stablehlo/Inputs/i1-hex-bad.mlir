// A hex blob of neither size is a located error.
func.func @main() -> tensor<128xi1> {
  %0 = stablehlo.constant dense<"0x000000"> : tensor<128xi1>
  return %0 : tensor<128xi1>
}
