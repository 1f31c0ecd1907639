// stablehlo.einsum, unary_einsum and torch_index_select, which HLO has no opcode for: lowered as XLA's client
// library expands them (sums of labels one operand alone has, one dot, a transpose; a gather with iotas for batch
// dims). Reactant.jl writes contractions as einsum with upper-case labels and scalar operands. Expected values from
// numpy (np.einsum, fancy indexing); both backends.

// RUN: xla-run %s --no-print --backend=interpreter | FileCheck %s
// RUN: xla-run %s --no-print | FileCheck %s
// RUN: xla-opt %s --print-short | FileCheck %s --check-prefix=HLO
// CHECK-NOT: error
// CHECK: 10 checks: 10 passed, 0 failed

// The result order differs from the dot's: a transpose follows it.
// HLO: dot({{.*}}), lhs_contracting_dims={1}, rhs_contracting_dims={0}
// HLO-NEXT: transpose({{.*}}), dimensions={1,0}

func.func public @main() {
  %a = stablehlo.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %b = stablehlo.constant dense<[[-5.0, -4.0, -3.0, -2.0], [-1.0, 0.0, 1.0, 2.0], [3.0, 4.0, 5.0, 6.0]]> : tensor<3x4xf32>
  %0 = "stablehlo.einsum"(%a, %b) {einsum_config = "ab,bc->ca"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<4x2xf32>
  check.expect_almost_eq_const %0, dense<[[5.0, -4.0], [8.0, 8.0], [11.0, 20.0], [14.0, 32.0]]> : tensor<4x2xf32>

  // Z is only in the lhs: summed before the dot; K is contracted.
  %p = stablehlo.constant dense<[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]> : tensor<2x2x2xf32>
  %q = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %1 = stablehlo.einsum %p, %q, config = "KAZ,KJ->JA" : (tensor<2x2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  check.expect_almost_eq_const %1, dense<[[28.0, 44.0], [38.0, 62.0]]> : tensor<2x2xf32>

  %s = stablehlo.constant dense<2.5> : tensor<f64>
  %v = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf64>
  %2 = stablehlo.einsum %s, %v, config = ",J->J" : (tensor<f64>, tensor<3xf64>) -> tensor<3xf64>
  check.expect_almost_eq_const %2, dense<[2.5, 5.0, 7.5]> : tensor<3xf64>

  %e1 = stablehlo.constant dense<[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]> : tensor<2x2x3xf32>
  %e2 = stablehlo.constant dense<[[[0.0], [1.0], [2.0]], [[3.0], [4.0], [5.0]]]> : tensor<2x3x1xf32>
  %3 = stablehlo.einsum %e1, %e2, config = "...ij, ...jk -> ...ik" : (tensor<2x2x3xf32>, tensor<2x3x1xf32>) -> tensor<2x2x1xf32>
  check.expect_almost_eq_const %3, dense<[[[5.0], [14.0]], [[86.0], [122.0]]]> : tensor<2x2x1xf32>

  %4 = "stablehlo.unary_einsum"(%a) {einsum_config = "ab->ba"} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  check.expect_almost_eq_const %4, dense<[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]> : tensor<3x2xf32>
  %x = stablehlo.iota dim = 0 : tensor<24xf32>
  %x3 = stablehlo.reshape %x : (tensor<24xf32>) -> tensor<2x3x4xf32>
  %5 = stablehlo.unary_einsum %x3, config = "abc->b" : (tensor<2x3x4xf32>) -> tensor<3xf32>
  check.expect_almost_eq_const %5, dense<[60.0, 92.0, 124.0]> : tensor<3xf32>

  %t = stablehlo.iota dim = 0 : tensor<15xi32>
  %t2 = stablehlo.reshape %t : (tensor<15xi32>) -> tensor<3x5xi32>
  %i = stablehlo.constant dense<[4, 0, 4]> : tensor<3xi64>
  %6 = "stablehlo.torch_index_select"(%t2, %i) {dim = 1 : i64, batch_dims = 0 : i64} : (tensor<3x5xi32>, tensor<3xi64>) -> tensor<3x3xi32>
  check.expect_eq_const %6, dense<[[4, 0, 4], [9, 5, 9], [14, 10, 14]]> : tensor<3x3xi32>

  // batch_dims = 1: row b of the index selects within entry b of the operand.
  %o = stablehlo.iota dim = 0 : tensor<24xf32>
  %o3 = stablehlo.reshape %o : (tensor<24xf32>) -> tensor<2x4x3xf32>
  %bi = stablehlo.constant dense<[[3, 1], [0, 2]]> : tensor<2x2xi32>
  %7 = "stablehlo.torch_index_select"(%o3, %bi) <{batch_dims = 1 : i64, dim = 1 : i64}> : (tensor<2x4x3xf32>, tensor<2x2xi32>) -> tensor<2x2x3xf32>
  check.expect_almost_eq_const %7, dense<[[[9.0, 10.0, 11.0], [3.0, 4.0, 5.0]], [[12.0, 13.0, 14.0], [18.0, 19.0, 20.0]]]> : tensor<2x2x3xf32>

  %w = stablehlo.iota dim = 0 : tensor<10xf32>
  %w2 = stablehlo.reshape %w : (tensor<10xf32>) -> tensor<5x2xf32>
  %ix = stablehlo.constant dense<[[1, 4], [0, 0]]> : tensor<2x2xi32>
  %8 = "stablehlo.torch_index_select"(%w2, %ix) {dim = 0 : i64, batch_dims = 0 : i64} : (tensor<5x2xf32>, tensor<2x2xi32>) -> tensor<2x2x2xf32>
  check.expect_almost_eq_const %8, dense<[[[2.0, 3.0], [8.0, 9.0]], [[0.0, 1.0], [0.0, 1.0]]]> : tensor<2x2x2xf32>
  // Negative dims count from the end, as in torch.
  %9 = "stablehlo.torch_index_select"(%t2, %i) {dim = -1 : i64, batch_dims = 0 : i64} : (tensor<3x5xi32>, tensor<3xi64>) -> tensor<3x3xi32>
  check.expect_eq_const %9, dense<[[4, 0, 4], [9, 5, 9], [14, 10, 14]]> : tensor<3x3xi32>
  return
}
