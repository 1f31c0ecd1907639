// Refining a shape-polymorphic module: a failed shape_assertion is the export's own message with its {N}
// placeholders filled (as XLA formats it), and given shapes that contradict the declared types are errors at the
// argument.

// RUN: not xlac %s --arg-shape=f32[4,2] --emit=hlo -o - 2>&1 | FileCheck %s --check-prefix=ASSERT
// ASSERT: shape-poly-errors.mlir:[[# @LINE + 40]]:3: error: Expected value >= 3 for dimension variable 'b'. Obtained 'b' = 2 from args[0].shape[1] (= 2), {{[{]}}b}.

// The same through xla-run, whose --input file gives the shape.
// RUN: python3 -c "import struct,sys; h=str(dict(descr='<f4',fortran_order=False,shape=(4,2))).encode(); h+=b' '*(117-len(h))+b'\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h+struct.pack('<8f',*range(8)))" > %t.a.npy
// RUN: not xla-run %s --input=%t.a.npy 2>&1 | FileCheck %s --check-prefix=ASSERT

// A satisfied assertion disappears.
// RUN: xlac %s --arg-shape=f32[4,5] --emit=hlo -o - | FileCheck %s --check-prefix=PASS
// PASS: ENTRY %main (Arg_0.1: f32[4,5]) -> f32[4,5]
// PASS-NOT: custom-call

// RUN: not xlac %s --arg-shape=f32[3,5] --emit=hlo -o - 2>&1 | FileCheck %s --check-prefix=DIM
// DIM: shape-poly-errors.mlir:[[# @LINE + 24]]:24: error: argument %a of @main has type tensor<4x?xf32>, but its given shape is f32[3,5]: dimension 0 is 4, not 3
// RUN: not xlac %s --arg-shape=f32[4] --emit=hlo -o - 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: argument %a of @main has type tensor<4x?xf32>, but its given shape is f32[4]: the ranks differ
// RUN: not xlac %s --arg-shape=s32[4,5] --emit=hlo -o - 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: error: argument %a of @main has type tensor<4x?xf32>, but its given shape is s32[4,5]: the element types differ
// RUN: not xlac %s --arg-shape=f32[4,5] --arg-shape=f32[2] --emit=hlo -o - 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: error: @main takes 1 argument, but 2 argument shapes were given to refine its dynamic dimensions
// RUN: not xlac %s --arg-shape=f32[4 --emit=hlo -o - 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: bad --arg-shape 'f32[4' (an array shape such as f32[4,8] or s32[])

// Without shapes the `?` is an error that says how to give them.
// RUN: not xlac %s --emit=hlo -o - 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: dynamic shapes are not supported: tensor<4x?xf32> (only bounded dimensions are; a shape-polymorphic export is refined from its entry arguments' shapes: give them with xla-run --input or xlac --arg-shape)

// Refinement errors inside the program.
// RUN: not xlac %S/Inputs/shape-poly-custom-call.mlir --arg-shape=f32[3] --emit=hlo -o - 2>&1 | FileCheck %s --check-prefix=CC
// CC: shape-poly-custom-call.mlir:3:8: error: cannot refine the result type of 'stablehlo.custom_call' from its operands: it stays f32[?]
// RUN: not xlac %S/Inputs/shape-poly-data-assertion.mlir --arg-shape=s32[3] --emit=hlo -o - 2>&1 | FileCheck %s --check-prefix=DATA
// DATA: error: shape_assertion's condition is not a constant: the module's dimension sizes must be known when it is compiled (its shapes were refined, but this value still depends on data)
// RUN: not xlac %S/Inputs/shape-poly-conflict.mlir --arg-shape=f32[3,2] --emit=hlo -o - 2>&1 | FileCheck %s --check-prefix=CONFLICT
// CONFLICT: shape-poly-conflict.mlir:6:8: error: 'stablehlo.dynamic_pad' produces f32[3,3] once its operands are refined, but its result type says f32[?,5]
// RUN: not xlac %S/Inputs/shape-poly-iota-conflict.mlir --arg-shape=f32[3,2] --emit=hlo -o - 2>&1 | FileCheck %s --check-prefix=IOTA
// IOTA: shape-poly-iota-conflict.mlir:5:31: error: the shape operand of 'stablehlo.dynamic_iota' gives dimension 0 size 3, but the result type says 5

func.func public @main(%a: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %b = stablehlo.get_dimension_size %a, dim = 1 : (tensor<4x?xf32>) -> tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %ok = stablehlo.compare  GE, %b, %c3,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%ok, %b) {api_version = 2 : i32, error_message = "Expected value >= 3 for dimension variable 'b'. Obtained 'b' = {0} from args[0].shape[1] (= {0}), {{b}.", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  return %a : tensor<4x?xf32>
}
