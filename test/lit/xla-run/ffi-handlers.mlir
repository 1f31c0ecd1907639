// XLA FFI handler libraries (--custom-call-lib, docs/custom_calls.md): custom calls with api_version = 4, as
// jax.ffi.ffi_call lowers them, run handlers exported by a shared library (test/ffi/ffi_test_handlers.cc, built by the
// test suite against runtime/ffi/xla_ffi_c_api.h only) through XLA's FFI C API. Attributes come from
// mhlo.backend_config; the interpreter calls the same handlers, so --check-against compares like with like.

// RUN: xla-run %s --custom-call-lib=%ffi_test_lib --check-against=interpreter --exact | FileCheck %s
// RUN: xla-run %s --custom-call-lib=%ffi_test_lib --backend=interpreter | FileCheck %s
// CHECK:      result_0 = f32[4]{0} {12.5, 25, 37.5, 50}
// CHECK-NEXT: result_1 = f32[4]{0} {25, 100, 225, 400}
// CHECK-NEXT: result_2 = f32[4]{0} {105, 208, 111, 214}
// CHECK-NEXT: result_3 = f32[4]{0} {1.5, 2.5, 3.5, 4.5}
// CHECK-NEXT: result_4 = f32[4]{0} {0, 0, 0, 0}
// CHECK-NEXT: result_5 = s32[2,2]{1,0} { { 7, 8 }, { 9, 10 } }

// xlac only compiles: it checks that every typed-FFI call has a handler and emits the calls for the host's handler.
// RUN: xlac %s --custom-call-lib=%ffi_test_lib --emit=hlo -o - | FileCheck %s --check-prefix=XLAC
// XLAC: custom_call_target="xlac_test_scale", api_version=API_VERSION_TYPED_FFI, backend_config={alpha = 2.5 : f32}

module @ffi {
  func.func @main(%p: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xi32>) {
    %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %z = stablehlo.multiply %p, %p : tensor<4xf32>
    %zero = stablehlo.subtract %z, %z : tensor<4xf32>
    %x = stablehlo.add %c, %zero : tensor<4xf32>
    %y = stablehlo.constant dense<[10.0, 20.0, 30.0, 40.0]> : tensor<4xf32>
    // An f32 attribute; an elementwise handler.
    %s = stablehlo.custom_call @xlac_test_scale(%x) {api_version = 4 : i32, mhlo.backend_config = {alpha = 2.5 : f32}} : (tensor<4xf32>) -> tensor<4xf32>
    // Several operands and two results (a tuple).
    %r:2 = stablehlo.custom_call @xlac_test_add_mul(%s, %y) {api_version = 4 : i32} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    // A string, an array, an i16 and a bool: x * 3 + offsets[i % 2] + len("ab").
    %a = stablehlo.custom_call @xlac_test_attrs(%x) {api_version = 4 : i32, mhlo.backend_config = {name = "ab", offsets = array<i64: 100, 200>, scale = 3 : i16, enabled = true}} : (tensor<4xf32>) -> tensor<4xf32>
    // The instantiate stage keeps `base` in the call site's state; the execute stage adds it.
    %t = stablehlo.custom_call @xlac_test_stateful(%x) {api_version = 4 : i32, mhlo.backend_config = {base = 5.0e-01 : f64}} : (tensor<4xf32>) -> tensor<4xf32>
    // A dotted target finds the symbol with '_' for '.'; enabled = false leaves the result zero.
    %d = stablehlo.custom_call @xlac.test.attrs(%x) {api_version = 4 : i32, mhlo.backend_config = {name = "", offsets = [1, 2], enabled = false}} : (tensor<4xf32>) -> tensor<4xf32>
    // A handler written in C: an s32 copy.
    %i = stablehlo.constant dense<[[7, 8], [9, 10]]> : tensor<2x2xi32>
    %k = stablehlo.custom_call @xlac_test_c_copy(%i) {api_version = 4 : i32} : (tensor<2x2xi32>) -> tensor<2x2xi32>
    return %r#0, %r#1, %a, %t, %d, %k : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xi32>
  }
}
