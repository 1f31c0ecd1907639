// Quantized types (!quant.uniform) lower to their storage integers with the StableHLO spec's arithmetic
// (frontend/stablehlo/lower_quant.cc). The expected values come from numpy implementing the spec's quantize /
// dequantize formulas in float32 (round half to even, clamp to the storage range), not from xlac.

// RUN: xla-run %s --no-print | FileCheck %s
// RUN: xla-run %s --no-print --backend=interpreter | FileCheck %s
// CHECK-NOT: error
// CHECK: 9 checks: 9 passed, 0 failed

module {
  func.func public @main() {
    // Round half to even after the zero point, and clamping: x / 0.5 - 1.
    %x = stablehlo.constant dense<[-1.3, 0.25, 0.75, 100.0, -100.0, 0.0, 1.25]> : tensor<7xf32>
    %q = stablehlo.uniform_quantize %x : (tensor<7xf32>) -> tensor<7x!quant.uniform<i8:f32, 5.000000e-01:-1>>
    %qs = stablehlo.bitcast_convert %q : (tensor<7x!quant.uniform<i8:f32, 5.000000e-01:-1>>) -> tensor<7xi8>
    check.expect_eq_const %qs, dense<[-4, 0, 0, 127, -128, -1, 2]> : tensor<7xi8>
    %dq = stablehlo.uniform_dequantize %q : (tensor<7x!quant.uniform<i8:f32, 5.000000e-01:-1>>) -> tensor<7xf32>
    check.expect_almost_eq_const %dq, dense<[-1.5, 0.5, 0.5, 64.0, -63.5, 0.0, 1.5]> : tensor<7xf32>

    // An op on differently quantized operands: dequantize, add, quantize to a narrow storage range.
    %a = stablehlo.constant dense<[0.3, -0.45, 1.0, 2.5]> : tensor<4xf32>
    %b = stablehlo.constant dense<[0.5, 0.7, -1.1, 3.0]> : tensor<4xf32>
    %qa = stablehlo.uniform_quantize %a : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 1.000000e-01>>
    %qb = stablehlo.uniform_quantize %b : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 2.000000e-01:5>>
    %sum = stablehlo.add %qa, %qb : (tensor<4x!quant.uniform<i8:f32, 1.000000e-01>>, tensor<4x!quant.uniform<i8:f32, 2.000000e-01:5>>) -> tensor<4x!quant.uniform<i8<-127:127>:f32, 2.500000e-01:-2>>
    %sums = stablehlo.bitcast_convert %sum : (tensor<4x!quant.uniform<i8<-127:127>:f32, 2.500000e-01:-2>>) -> tensor<4xi8>
    check.expect_eq_const %sums, dense<[2, -1, -2, 20]> : tensor<4xi8>

    // A quantized convolution with per-channel weights (quantized dimension 0) and an i32 per-channel result
    // (dimension 1), requantized to i8, relu as a maximum with the quantized zero, a max pool, dequantized.
    %in = stablehlo.constant dense<[[[[0.0628651083, -0.0660524294, 0.320211321, 0.0524500571], [-0.267834693, 0.180797532, 0.65200001, 0.473540485], [-0.351867616, -0.632710755, -0.311637223, 0.0206629895], [-1.1625154, -0.109395832, -0.622955501, -0.36613369]], [[-0.272129506, -0.158150077, 0.205815271, 0.521256685], [-0.0642673299, 0.683231711, -0.332597345, 0.175755039], [0.451735079, 0.0470061488, -0.37174964, -0.460862696], [-0.228862911, 0.110097565, -0.504809082, -0.104587786]]]]> : tensor<1x2x4x4xf32>
    %w = stablehlo.constant dense<[[[[96, -93, 20], [56, 88, 6], [-32, -48, -20]], [[-4, 56, 99], [-109, 111, 8], [-36, 44, 18]]], [[[-63, -45, 56], [24, 1, -41], [66, -28, -44]], [[100, -60, -70], [55, 31, -115], [-106, -31, 85]]], [[[-25, 73, -47], [-66, 74, 96], [-107, -113, 44]], [[-42, 19, -89], [92, -13, 101], [76, 52, -69]]]]> : tensor<3x2x3x3x!quant.uniform<i8<-127:127>:f32:0, {1.000000e-02,2.000000e-02,4.000000e-02}>>
    %qin = stablehlo.uniform_quantize %in : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 5.000000e-02:3>>
    %conv = stablehlo.convolution(%qin, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4x!quant.uniform<i8:f32, 5.000000e-02:3>>, tensor<3x2x3x3x!quant.uniform<i8<-127:127>:f32:0, {1.000000e-02,2.000000e-02,4.000000e-02}>>) -> tensor<1x3x2x2x!quant.uniform<i32:f32:1, {5.000000e-04,1.000000e-03,2.000000e-03}>>
    %convs = stablehlo.bitcast_convert %conv : (tensor<1x3x2x2x!quant.uniform<i32:f32:1, {5.000000e-04,1.000000e-03,2.000000e-03}>>) -> tensor<1x3x2x2xi32>
    check.expect_eq_const %convs, dense<[[[[2876, -59], [-1835, -2679]], [[-1161, -2902], [493, 2202]], [[3483, 5475], [2342, 69]]]]> : tensor<1x3x2x2xi32>
    %rq = stablehlo.uniform_quantize %conv : (tensor<1x3x2x2x!quant.uniform<i32:f32:1, {5.000000e-04,1.000000e-03,2.000000e-03}>>) -> tensor<1x3x2x2x!quant.uniform<i8:f32, 1.000000e-01:-5>>
    %rqs = stablehlo.bitcast_convert %rq : (tensor<1x3x2x2x!quant.uniform<i8:f32, 1.000000e-01:-5>>) -> tensor<1x3x2x2xi8>
    check.expect_eq_const %rqs, dense<[[[[9, -5], [-14, -18]], [[-17, -34], [0, 17]], [[65, 105], [42, -4]]]]> : tensor<1x3x2x2xi8>
    %zero = stablehlo.constant dense<-5> : tensor<1x3x2x2x!quant.uniform<i8:f32, 1.000000e-01:-5>>
    %relu = stablehlo.maximum %rq, %zero : tensor<1x3x2x2x!quant.uniform<i8:f32, 1.000000e-01:-5>>
    %ninf = stablehlo.constant dense<-128> : tensor<!quant.uniform<i8:f32, 1.000000e-01:-5>>
    %pool = "stablehlo.reduce_window"(%relu, %ninf) <{window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%l: tensor<!quant.uniform<i8:f32, 1.000000e-01:-5>>, %r: tensor<!quant.uniform<i8:f32, 1.000000e-01:-5>>):
      %m = stablehlo.maximum %l, %r : tensor<!quant.uniform<i8:f32, 1.000000e-01:-5>>
      stablehlo.return %m : tensor<!quant.uniform<i8:f32, 1.000000e-01:-5>>
    }) : (tensor<1x3x2x2x!quant.uniform<i8:f32, 1.000000e-01:-5>>, tensor<!quant.uniform<i8:f32, 1.000000e-01:-5>>) -> tensor<1x3x1x1x!quant.uniform<i8:f32, 1.000000e-01:-5>>
    %pools = stablehlo.bitcast_convert %pool : (tensor<1x3x1x1x!quant.uniform<i8:f32, 1.000000e-01:-5>>) -> tensor<1x3x1x1xi8>
    check.expect_eq_const %pools, dense<[[[[9]], [[17]], [[105]]]]> : tensor<1x3x1x1xi8>
    %out = stablehlo.uniform_dequantize %pool : (tensor<1x3x1x1x!quant.uniform<i8:f32, 1.000000e-01:-5>>) -> tensor<1x3x1x1xf32>
    check.expect_almost_eq_const %out, dense<[[[[1.4]], [[2.2]], [[11.0]]]]> : tensor<1x3x1x1xf32>

    // Storage ops keep the storage values: a reshape, a transpose and a slice of %q.
    %r = stablehlo.reshape %q : (tensor<7x!quant.uniform<i8:f32, 5.000000e-01:-1>>) -> tensor<7x1x!quant.uniform<i8:f32, 5.000000e-01:-1>>
    %t = stablehlo.transpose %r, dims = [1, 0] : (tensor<7x1x!quant.uniform<i8:f32, 5.000000e-01:-1>>) -> tensor<1x7x!quant.uniform<i8:f32, 5.000000e-01:-1>>
    %s = stablehlo.slice %t [0:1, 2:5] : (tensor<1x7x!quant.uniform<i8:f32, 5.000000e-01:-1>>) -> tensor<1x3x!quant.uniform<i8:f32, 5.000000e-01:-1>>
    %ss = stablehlo.bitcast_convert %s : (tensor<1x3x!quant.uniform<i8:f32, 5.000000e-01:-1>>) -> tensor<1x3xi8>
    check.expect_eq_const %ss, dense<[[0, 127, -128]]> : tensor<1x3xi8>

    // A quantized dot: i8 x i8 -> i32 with scale 0.1 * 0.2; its dequantized value is the float dot of the dequantized operands.
    %qm = stablehlo.constant dense<[[10, 20], [-5, 15]]> : tensor<2x2x!quant.uniform<i8:f32, 1.000000e-01>>
    %qv = stablehlo.constant dense<[[5], [0]]> : tensor<2x1x!quant.uniform<i8:f32, 2.000000e-01:-5>>
    %dot = stablehlo.dot_general %qm, %qv, contracting_dims = [1] x [0] : (tensor<2x2x!quant.uniform<i8:f32, 1.000000e-01>>, tensor<2x1x!quant.uniform<i8:f32, 2.000000e-01:-5>>) -> tensor<2x1x!quant.uniform<i32:f32, 2.000000e-02>>
    %dotf = stablehlo.uniform_dequantize %dot : (tensor<2x1x!quant.uniform<i32:f32, 2.000000e-02>>) -> tensor<2x1xf32>
    check.expect_almost_eq_const %dotf, dense<[[4.0], [0.5]]> : tensor<2x1xf32>
    func.return
  }
}
