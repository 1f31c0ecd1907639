// MHLO's custom assembly of an op is StableHLO's (XLA's MHLO exports, older Shardy round-trip inputs), so every
// mhlo.* spelling of a pretty form xlac reads is read as well: reduce (`applies` and `reducer`), while, custom_call,
// and the forms with positional parts (slice ranges, tuple element index, a one-element tuple's result type).

// RUN: xla-opt %s --print-short | FileCheck %s --check-prefix=HLO
// RUN: xla-run %s --no-print | FileCheck %s
// RUN: xla-run %s --no-print --backend=interpreter | FileCheck %s

// HLO: reduce({{.*}}), dimensions={0}
// HLO: while(
// HLO: custom-call({{.*}}), custom_call_target="Sharding", sharding={replicated}
// CHECK-NOT: error
// CHECK: 6 checks: 6 passed, 0 failed

func.func public @main() {
  %c0 = mhlo.constant dense<0> : tensor<i32>
  %x = mhlo.iota dim = 0 : tensor<8xi32>
  %sum = mhlo.reduce(%x init: %c0) applies mhlo.add across dimensions = [0] : (tensor<8xi32>, tensor<i32>) -> tensor<i32>
  check.expect_eq_const %sum, dense<28> : tensor<i32>
  %max = mhlo.reduce(%x init: %c0) across dimensions = [0] : (tensor<8xi32>, tensor<i32>) -> tensor<i32>
   reducer(%a: tensor<i32>, %b: tensor<i32>)  {
    %m = mhlo.maximum %a, %b : tensor<i32>
    mhlo.return %m : tensor<i32>
  }
  check.expect_eq_const %max, dense<7> : tensor<i32>
  %w:2 = mhlo.while(%iterArg = %c0, %iterArg_0 = %c0) : tensor<i32>, tensor<i32>
   cond {
    %n = mhlo.constant dense<4> : tensor<i32>
    %p = mhlo.compare LT, %iterArg, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    mhlo.return %p : tensor<i1>
  } do {
    %one = mhlo.constant dense<1> : tensor<i32>
    %i = mhlo.add %iterArg, %one : tensor<i32>
    %acc = mhlo.add %iterArg_0, %iterArg : tensor<i32>
    mhlo.return %i, %acc : tensor<i32>, tensor<i32>
  }
  check.expect_eq_const %w#1, dense<6> : tensor<i32>
  %s = mhlo.slice %x [2:6:2] : (tensor<8xi32>) -> tensor<2xi32>
  check.expect_eq_const %s, dense<[2, 4]> : tensor<2xi32>
  %t = mhlo.tuple %sum : tuple<tensor<i32>>
  %e = mhlo.get_tuple_element %t[0] : (tuple<tensor<i32>>) -> tensor<i32>
  check.expect_eq_const %e, dense<28> : tensor<i32>
  %b = mhlo.broadcast_in_dim %e, dims = [] : (tensor<i32>) -> tensor<2xi32>
  %c = mhlo.custom_call @Sharding(%b) {mhlo.sharding = "{replicated}"} : (tensor<2xi32>) -> tensor<2xi32>
  check.expect_eq_const %c, dense<28> : tensor<2xi32>
  func.return
}
