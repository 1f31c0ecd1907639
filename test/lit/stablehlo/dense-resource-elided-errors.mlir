// Elided values make constants of unknown value; where the values themselves are needed (shape operands,
// dimension attributes) that is a located error, and so is a named resource in a file that has no
// {-# dialect_resources #-} section at all (not an elided print: the blobs are missing).

// RUN: xla-opt %s --split-input-file --verify-diagnostics

func.func @main(%x: tensor<4xf32>) -> tensor<2xf32> {
  %start = stablehlo.constant dense_resource<__elided__> : tensor<1xi64>
  %limit = stablehlo.constant dense<3> : tensor<1xi64>
  %stride = stablehlo.constant dense<1> : tensor<1xi64>
  // expected-error@+1 {{operand 1 of 'stablehlo.real_dynamic_slice' must be a constant with known values, but the print elided them}}
  %0 = stablehlo.real_dynamic_slice %x, %start, %limit, %stride : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{the values of this dense_resource were elided when the file was printed, but they are needed here}}
  %0 = "stablehlo.transpose"(%x) <{permutation = dense_resource<__elided__> : tensor<2xi64>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @main() -> tensor<2xf32> {
  // expected-error@+1 {{dense_resource<weights> has no blob in the file's dialect_resources: the file has no {-# dialect_resources #-} section}}
  %0 = stablehlo.constant dense_resource<weights> : tensor<2xf32>
  return %0 : tensor<2xf32>
}
