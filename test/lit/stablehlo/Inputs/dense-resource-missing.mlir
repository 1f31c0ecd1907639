// A dense_resource without its blob (never printed, or elided) is a located error.

func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense_resource<torch_tensor_2_torch.float32> : tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense_resource<__elided__> : tensor<2xf32>
  return %0 : tensor<2xf32>
}
