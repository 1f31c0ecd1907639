// A custom_call @mhlo.<op> names an op xlac lowers, and carries nothing but what MHLO's extensibility protocol
// passes on to it (mhlo.attributes; custom_call's own attributes only at their defaults); else a located error.

// RUN: xla-opt %s --split-input-file --verify-diagnostics

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{unsupported op 'mhlo.frobnicate' (sent as custom_call @mhlo.frobnicate, MHLO's encoding of ops StableHLO lacks)}}
  %0 = stablehlo.custom_call @mhlo.frobnicate(%x) {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'has_side_effect' on custom_call @mhlo.erf: the op it encodes takes only the attributes in mhlo.attributes}}
  %0 = stablehlo.custom_call @mhlo.erf(%x) {has_side_effect = true, mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'backend_config' on custom_call @mhlo.erf}}
  %0 = stablehlo.custom_call @mhlo.erf(%x) {backend_config = "fast", mhlo.attributes = {}} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{mhlo.attributes must be a dictionary}}
  %0 = stablehlo.custom_call @mhlo.erf(%x) {mhlo.attributes = "k = 1", mhlo.version = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<5xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'largest' must be a boolean}}
  %0:2 = stablehlo.custom_call @mhlo.topk(%x) {mhlo.attributes = {k = 2 : i64, largest = 1 : i64}, mhlo.version = 1 : i64} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>)
  return %0#0 : tensor<2xf32>
}
