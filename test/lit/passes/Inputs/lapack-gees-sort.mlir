// lapack_zgees_ffi asked to sort the eigenvalues (jaxlib's own kernel rejects it too).
module @m {
  func.func public @main(%a: tensor<2x2xcomplex<f64>>) -> tensor<2x2xcomplex<f64>> {
    %0:5 = stablehlo.custom_call @lapack_zgees_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, sort = 83 : ui8}} : (tensor<2x2xcomplex<f64>>) -> (tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>>, tensor<2xcomplex<f64>>, tensor<i32>, tensor<i32>)
    return %0#0 : tensor<2x2xcomplex<f64>>
  }
}
