// lapack_sgeev_ffi with the complex type's results (w, vl, vr, info) instead of a real type's (wr, wi, vl, vr, info).
module @m {
  func.func public @main(%a: tensor<2x2xf32>) -> tensor<2xcomplex<f32>> {
    %0:4 = stablehlo.custom_call @lapack_sgeev_ffi(%a) {mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}} : (tensor<2x2xf32>) -> (tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>, tensor<2x2xcomplex<f32>>, tensor<i32>)
    return %0#0 : tensor<2xcomplex<f32>>
  }
}
