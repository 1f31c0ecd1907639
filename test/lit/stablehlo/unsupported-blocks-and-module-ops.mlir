// What xlac does not support is reported as the op it is, at its line and column: branches between blocks (the
// CFG form of XLA's old HLO importer, IREE's test inputs: functions with several blocks) and module-level ops of
// other dialects (IREE's util.global).

// RUN: xla-opt %s --split-input-file --verify-diagnostics

func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{unsupported op 'cf.br': it branches to another block, and functions with several blocks are not supported}}
  cf.br ^bb1(%arg0 : tensor<f32>)
^bb1(%0: tensor<f32>):
  return %0 : tensor<f32>
}

// -----

func.func @main(%arg0: tensor<i1>, %arg1: tensor<f32>) -> tensor<f32> {
  %c = tensor.extract %arg0[] : tensor<i1>
  // expected-error@+1 {{unsupported op 'cf.cond_br'}}
  cf.cond_br %c, ^bb1, ^bb2(%arg1 : tensor<f32>)
^bb1:
  return %arg1 : tensor<f32>
^bb2(%0: tensor<f32>):
  return %0 : tensor<f32>
}

// -----

func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{unsupported op 'cf.br': it branches to another block}}
  "cf.br"(%arg0)[^bb1] : (tensor<f32>) -> ()
^bb1(%0: tensor<f32>):
  "func.return"(%0) : (tensor<f32>) -> ()
}

// -----

module {
  // expected-error@+1 {{unsupported op 'util.global'}}
  util.global private @w = #util.byte_pattern<1> : tensor<4xf32>
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}

// -----

// expected-error@+1 {{unsupported op 'ml_program.global'}}
"ml_program.global"() <{sym_name = "w", type = tensor<4xf32>, is_mutable}> : () -> ()
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}
