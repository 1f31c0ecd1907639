// arith, math and tensor ops that torch-mlir and JAX leave in StableHLO modules, in their custom and generic forms,
// checked on the interpreter: signless integers are signed, the unsigned ops reinterpret the bits.

// RUN: xla-run %s --no-print --backend=interpreter | FileCheck %s
// RUN: xla-opt %s --print-short | xla-opt - --print-short > /dev/null
// CHECK-NOT: error
// CHECK: 26 checks: 26 passed, 0 failed

module {
  func.func public @main() {
    %cst = arith.constant dense<[1, -2, 3, 4]> : tensor<4xi64>
    %cf = arith.constant dense<9.9999999999999998E-13> : tensor<1xf64>
    %ninf = arith.constant dense<0xFFF0000000000000> : tensor<1xf64>
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : i64
    %t = arith.constant true
    %f = arith.constant 1.5 : f32
    %g = "arith.constant"() <{value = dense<2.5> : tensor<2xf32>}> : () -> tensor<2xf32>
    check.expect_eq_const %cst, dense<[1, -2, 3, 4]> : tensor<4xi64>
    check.expect_eq_const %ninf, dense<0xFFF0000000000000> : tensor<1xf64>

    %sum = arith.addi %cst, %cst overflow<nsw> : tensor<4xi64>
    check.expect_eq_const %sum, dense<[2, -4, 6, 8]> : tensor<4xi64>
    %prod = arith.mulf %g, %g fastmath<fast> : tensor<2xf32>
    check.expect_eq_const %prod, dense<6.25> : tensor<2xf32>
    %m1 = arith.constant dense<-1> : tensor<4xi64>
    %udiv = arith.divui %m1, %cst : tensor<4xi64>
    %sdiv = arith.divsi %m1, %cst : tensor<4xi64>
    check.expect_eq_const %sdiv, dense<[-1, 0, 0, 0]> : tensor<4xi64>
    %umax = arith.maxui %m1, %cst : tensor<4xi64>
    check.expect_eq_const %umax, dense<-1> : tensor<4xi64>
    %q = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
    %udiv2 = arith.divui %m1, %q : tensor<4xi64>
    check.expect_eq_const %udiv2, dense<[-1, 9223372036854775807, 6148914691236517205, 4611686018427387903]> : tensor<4xi64>

    %lt = arith.cmpi slt, %m1, %cst : tensor<4xi64>
    check.expect_eq_const %lt, dense<[true, false, true, true]> : tensor<4xi1>
    %ult = arith.cmpi ult, %m1, %cst : tensor<4xi64>
    check.expect_eq_const %ult, dense<false> : tensor<4xi1>
    %generic = "arith.cmpi"(%m1, %cst) <{predicate = 2 : i64}> : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
    check.expect_eq_const %generic, dense<[true, false, true, true]> : tensor<4xi1>
    %nan = arith.constant dense<[0x7FC00000, 1.0]> : tensor<2xf32>
    %one = arith.constant dense<1.0> : tensor<2xf32>
    %une = arith.cmpf une, %nan, %one : tensor<2xf32>
    check.expect_eq_const %une, dense<[true, false]> : tensor<2xi1>
    %one_ = arith.cmpf one, %nan, %one : tensor<2xf32>
    check.expect_eq_const %one_, dense<false> : tensor<2xi1>
    %ugt = arith.cmpf ugt, %nan, %one : tensor<2xf32>
    check.expect_eq_const %ugt, dense<[true, false]> : tensor<2xi1>

    %sel = arith.select %t, %f, %f : f32
    %sel_t = arith.select %lt, %cst, %m1 : tensor<4xi1>, tensor<4xi64>
    check.expect_eq_const %sel_t, dense<[1, -1, 3, 4]> : tensor<4xi64>

    %i = arith.index_cast %c0 : index to i64
    %e = arith.extui %t : i1 to i32
    %es = arith.extsi %t : i1 to i32
    %both = tensor.from_elements %e, %es : tensor<2xi32>
    check.expect_eq_const %both, dense<[1, -1]> : tensor<2xi32>
    %fi = arith.fptosi %f : f32 to i32
    %w = arith.extf %f : f32 to f64
    %fe = tensor.from_elements %w, %w, %w, %w : tensor<2x2xf64>
    check.expect_eq_const %fe, dense<1.5> : tensor<2x2xf64>
    %sq = math.sqrt %g : tensor<2xf32>
    %ex = math.exp %sq fastmath<none> : tensor<2xf32>

    %x = tensor.extract %cst[%c2] : tensor<4xi64>
    %x2 = tensor.extract %cst[%i] : tensor<4xi64>
    %xs = tensor.from_elements %x, %x2 : tensor<2xi64>
    check.expect_eq_const %xs, dense<[3, 1]> : tensor<2xi64>
    %empty = tensor.empty() : tensor<2x3xf32>
    %ins = tensor.insert %x into %cst[%c0] : tensor<4xi64>
    check.expect_eq_const %ins, dense<[3, -2, 3, 4]> : tensor<4xi64>
    %ex2 = tensor.expand_shape %cst [[0, 1]] output_shape [2, 2] : tensor<4xi64> into tensor<2x2xi64>
    %co = tensor.collapse_shape %ex2 [[0, 1]] : tensor<2x2xi64> into tensor<4xi64>
    check.expect_eq_const %co, dense<[1, -2, 3, 4]> : tensor<4xi64>
    %cast = tensor.cast %ex2 : tensor<2x2xi64> to tensor<2x2xi64>
    %sl = tensor.extract_slice %cast[1, 0] [1, 2] [1, 1] : tensor<2x2xi64> to tensor<2xi64>
    check.expect_eq_const %sl, dense<[3, 4]> : tensor<2xi64>
    %dsl = tensor.extract_slice %cst[%i] [2] [1] : tensor<4xi64> to tensor<2xi64>
    check.expect_eq_const %dsl, dense<[1, -2]> : tensor<2xi64>
    %isl = tensor.insert_slice %sl into %cst[2] [2] [1] : tensor<2xi64> into tensor<4xi64>
    check.expect_eq_const %isl, dense<[1, -2, 3, 4]> : tensor<4xi64>
    %cat = tensor.concat dim(0) %sl, %dsl : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
    check.expect_eq_const %cat, dense<[3, 4, 1, -2]> : tensor<4xi64>
    %c1 = arith.constant 1 : index
    %dim = tensor.dim %ex2, %c1 : tensor<2x2xi64>
    %dim1 = "tensor.dim"(%cst, %c0) : (tensor<4xi64>, index) -> index
    %dims = tensor.from_elements %dim, %dim1 : tensor<2xindex>
    check.expect_eq_const %dims, dense<[2, 4]> : tensor<2xindex>
    %ninf_s = arith.constant 0xFF800000 : f32
    %ninf_t = tensor.from_elements %ninf_s : tensor<1xf32>
    check.expect_eq_const %ninf_t, dense<0xFF800000> : tensor<1xf32>
    %sp = tensor.splat %f : tensor<3xf32>
    check.expect_eq_const %sp, dense<1.5> : tensor<3xf32>
    func.return
  }
}
