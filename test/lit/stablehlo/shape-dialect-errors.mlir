// shape dialect extents that contradict each other or the declared type: located errors.

// RUN: xla-opt %s --split-input-file --verify-diagnostics

func.func @main(%x: tensor<2x3xf32>) -> tensor<4xindex> {
  %a = shape.shape_of %x : tensor<2x3xf32> -> tensor<2xindex>
  %b = shape.const_shape [4, 1] : tensor<2xindex>
  // expected-error@+1 {{shape.broadcast of incompatible extents 2 and 4}}
  %c = shape.broadcast %a, %b : tensor<2xindex>, tensor<2xindex> -> tensor<4xindex>
  return %c : tensor<4xindex>
}

// -----

func.func @main(%x: tensor<2x3xf32>) -> tensor<3xindex> {
  // expected-error@+1 {{shape.shape_of gives 2 extents, but its result type is tensor<3xindex>}}
  %a = shape.shape_of %x : tensor<2x3xf32> -> tensor<3xindex>
  return %a : tensor<3xindex>
}
