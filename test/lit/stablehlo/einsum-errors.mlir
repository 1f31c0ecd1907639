// einsum configs xlac cannot lower, or that contradict the operands or the result type: located errors.

// RUN: xla-opt %s --split-input-file --verify-diagnostics

func.func @main(%x: tensor<3x3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{repeats a label in one operand (a diagonal): not supported}}
  %0 = stablehlo.einsum %x, %y, config = "ii,i->i" : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @main(%x: tensor<2x3xf32>, %y: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{a label has sizes 3 and 4}}
  %0 = stablehlo.einsum %x, %y, config = "ab,bc->ac" : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @main(%x: tensor<2x3xf32>, %y: tensor<3x5xf32>) -> tensor<5x2xf32> {
  // expected-error@+1 {{gives a result of dimensions [2, 5], not the declared type's}}
  %0 = stablehlo.einsum %x, %y, config = "ab,bc->ac" : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}

// -----

func.func @main(%x: tensor<2x3xf32>, %y: tensor<3x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{does not match the operand ranks 2 and 2}}
  %0 = stablehlo.einsum %x, %y, config = "abc,bc->ac" : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @main(%x: tensor<2x3xf32>, %i: tensor<2xi32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{torch_index_select needs 0 <= batch_dims <= dim < operand rank}}
  %0 = "stablehlo.torch_index_select"(%x, %i) {dim = 2 : i64, batch_dims = 0 : i64} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
