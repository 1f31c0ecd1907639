// A file of several public functions and no @main (tt-mlir's and other exporters' test files): the entry calls each
// uncalled public function in order, takes their parameters one after another and returns their results as a tuple,
// with a warning naming them; an uncalled private function is dead code, not an entry.

// RUN: xla-opt %s --print-short 2>&1 | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact 2>&1 | FileCheck %s --check-prefix=EXEC

// CHECK: several-entry-functions.mlir:[[@LINE+14]]:20: warning: there is no @main: the entry calls the 2 uncalled functions in order (@add_one, @mul), with their parameters one after another, and returns their results as a tuple
// CHECK: ENTRY main
// CHECK-NEXT: Arg_0.{{[0-9]+}} = f32[4]{0} parameter(0)
// CHECK-NEXT: call.{{[0-9]+}} = f32[4]{0} call(Arg_0.{{[0-9]+}}), to_apply=add_one
// CHECK-NEXT: Arg_1.{{[0-9]+}} = f32[2,2]{1,0} parameter(1)
// CHECK-NEXT: Arg_2.{{[0-9]+}} = f32[2,2]{1,0} parameter(2), sharding={replicated}
// CHECK-NEXT: call.{{[0-9]+}} = (f32[2,2]{1,0}, f32[2,2]{1,0}) call(Arg_1.{{[0-9]+}}, Arg_2.{{[0-9]+}}), to_apply=mul
// CHECK-NOT: to_apply=dead

// EXEC: result_0 = f32[4]{0} {[[X:.*]]}
// EXEC: result_1_0 = f32[2,2]{1,0}
// EXEC: check against the interpreter: 3 of 3 outputs match

module @tests attributes {} {
  func.func public @add_one(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c = stablehlo.constant dense<1.0> : tensor<4xf32>
    %0 = stablehlo.add %x, %c : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func public @mul(%a: tensor<2x2xf32>, %b: tensor<2x2xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
    %0 = stablehlo.multiply %a, %b : tensor<2x2xf32>
    return %0, %a : tensor<2x2xf32>, tensor<2x2xf32>
  }
  func.func private @dead(%a: tensor<2xf32>) -> tensor<2xf32> {
    return %a : tensor<2xf32>
  }
}
