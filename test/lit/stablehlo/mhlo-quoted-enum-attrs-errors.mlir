// A quoted enum body must still be `category VALUE`.

// RUN: xla-opt %s --verify-diagnostics

func.func @main(%x: tensor<3xf32>) -> tensor<3xi1> {
  // expected-error@+1 {{expected '<category VALUE>' in #mhlo<...>, but found '"GT"'}}
  %0 = "mhlo.compare"(%x, %x) {comparison_direction = #mhlo<"GT">} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}
