// A dense_resource without its blob in a file that has no dialect_resources section is a located error (elided
// blobs are unknown values: dense-resource-elided.mlir).

func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense_resource<torch_tensor_2_torch.float32> : tensor<2xf32>
  return %0 : tensor<2xf32>
}
