// The shape dialect's extent tensors, as onnx-mlir's ONNX -> StableHLO conversion writes broadcasts (onnx.Expand):
// shape.const_shape / shape_of / broadcast fold to s64 constants, the dynamic_broadcast_in_dim shape operands fold
// from them, and the `?` dims a static entry signature leaves inside the module are refined from those values.
// Expected values from numpy (np.broadcast_to, np.broadcast_shapes); both backends.

// RUN: xla-run %s --no-print --backend=interpreter | FileCheck %s
// RUN: xla-run %s --no-print | FileCheck %s
// CHECK-NOT: error
// CHECK: 4 checks: 4 passed, 0 failed

func.func @main() {
  %i = stablehlo.iota dim = 0 : tensor<6xf32>
  %x = stablehlo.reshape %i : (tensor<6xf32>) -> tensor<2x1x3x1xf32>
  %0 = shape.const_shape [2, 2, 3, 2] : tensor<4xindex>
  %1 = stablehlo.dynamic_broadcast_in_dim %x, %0, dims = [0, 1, 2, 3] : (tensor<2x1x3x1xf32>, tensor<4xindex>) -> tensor<2x2x3x2xf32>
  check.expect_almost_eq_const %1, dense<[[[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]], [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]], [[[3.0, 3.0], [4.0, 4.0], [5.0, 5.0]], [[3.0, 3.0], [4.0, 4.0], [5.0, 5.0]]]]> : tensor<2x2x3x2xf32>

  // onnx.Expand by another tensor's shape: a broadcast to tensor<?x?xf32> whose extents are constants.
  %cst = arith.constant dense<[3, 2]> : tensor<2xi64>
  %c = shape.const_shape [2, 1, 3, 1] : tensor<4xindex>
  %one = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %2 = stablehlo.dynamic_broadcast_in_dim %one, %cst, dims = [] : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>
  %3 = shape.shape_of %2 : tensor<?x?xf32> -> tensor<2xindex>
  %4 = shape.broadcast %3, %c : tensor<2xindex>, tensor<4xindex> -> tensor<4xindex>
  %5 = stablehlo.dynamic_broadcast_in_dim %x, %4, dims = [0, 1, 2, 3] : (tensor<2x1x3x1xf32>, tensor<4xindex>) -> tensor<2x1x3x2xf32>
  %6 = stablehlo.dynamic_broadcast_in_dim %2, %4, dims = [2, 3] : (tensor<?x?xf32>, tensor<4xindex>) -> tensor<2x1x3x2xf32>
  %7 = stablehlo.multiply %5, %6 : tensor<2x1x3x2xf32>
  check.expect_almost_eq_const %7, dense<[[[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]], [[[3.0, 3.0], [4.0, 4.0], [5.0, 5.0]]]]> : tensor<2x1x3x2xf32>
  %e = arith.index_cast %4 : tensor<4xindex> to tensor<4xi64>
  check.expect_eq_const %e, dense<[2, 1, 3, 2]> : tensor<4xi64>
  %t = shape.to_extent_tensor %3 : tensor<2xindex> -> tensor<2xindex>
  %te = arith.index_cast %t : tensor<2xindex> to tensor<2xi64>
  check.expect_eq_const %te, dense<[3, 2]> : tensor<2xi64>
  return
}
