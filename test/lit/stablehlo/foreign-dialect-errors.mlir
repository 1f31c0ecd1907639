// Foreign dialect constructs that change a program's meaning, or that are malformed, are located errors.

// RUN: xla-opt %s --split-input-file --verify-diagnostics

func.func @main(%arg0: tensor<4xf32> {foo.bad = #foo<x [1, 2>}) -> tensor<4xf32> {
  // expected-error@-1 {{unbalanced '>' in #foo<...>: '[' is still open}}
  return %arg0 : tensor<4xf32>
}

// -----

// expected-error@+1 {{type !ttcore.tile<32x32, bf16> has no HLO equivalent}}
func.func @main(%arg0: !ttcore.tile<32x32, bf16>) -> tensor<4xf32> {
  %0 = stablehlo.constant dense<1.0> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error@+1 {{sparse tensor encodings (#sparse_tensor.encoding) are not supported}}
func.func @main(%arg0: tensor<4x4xf32, #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>>) -> tensor<4x4xf32> {
  return %arg0 : tensor<4x4xf32>
}

// -----

func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{unsupported op 'ttir.relu'}}
  %0 = "ttir.relu"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{unterminated string literal}}
  %0 = stablehlo.add %arg0, %arg0 {a = #foo<"abc>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
