"""XLA FFI handler libraries (custom_call_libs=, docs/custom_calls.md): typed-FFI custom calls of a StableHLO module
run handlers of the library the test suite builds (test/ffi/ffi_test_handlers.cc), compiled and on the interpreter."""

import os

import numpy as np
import pytest

import xlac


def _library():
    path = os.environ.get("XLAC_FFI_TEST_LIB")
    if not path:
        # build/python/xlac/__init__.py -> build/test/ffi/
        build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(xlac.__file__))))
        path = os.path.join(build, "test", "ffi", "libxlac_ffi_test_handlers.so")
    if not os.path.exists(path):
        pytest.skip(f"the test handler library is not built ({path}; ninja -C build xlac_ffi_test_handlers)")
    return path


MODULE = """module @ffi {
  func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
    %s = stablehlo.custom_call @xlac_test_scale(%x) {api_version = 4 : i32, mhlo.backend_config = {alpha = 1.5 : f32}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %r:2 = stablehlo.custom_call @xlac_test_add_mul(%s, %y) {api_version = 4 : i32} : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
    %a = stablehlo.custom_call @xlac_test_attrs(%x) {api_version = 4 : i32, mhlo.backend_config = {name = "xyz", offsets = array<i32: 1, 2, 3>, scale = 2.0 : f64}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %r#0, %r#1, %a : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
}
"""


def _expected(x, y):
    s = x * np.float32(1.5)
    offsets = np.tile(np.array([1, 2, 3], np.float32), 2).reshape(2, 3)
    return s + y, s * y, (x.astype(np.float64) * 2 + offsets + 3).astype(np.float32)


@pytest.mark.parametrize("run", ["compiled", "interpreter"])
def test_handlers_run(run):
    lib = _library()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 10, np.float32)
    if run == "compiled":
        results = xlac.compile(MODULE, custom_call_libs=[lib])(x, y)
    else:
        results = xlac.interpret(MODULE, x, y, custom_call_libs=[lib])
    for got, want in zip(results, _expected(x, y)):
        np.testing.assert_array_equal(got, want)


def test_missing_handler_is_a_compile_error():
    lib = _library()
    text = MODULE.replace("@xlac_test_scale", "@no.such.handler")
    with pytest.raises(xlac.CompileError, match=r"<text>:3:5: error: no XLA FFI handler for custom call target "
                                                r"'no.such.handler' \(looked for 'no_such_handler' in "):
        xlac.compile(text, custom_call_libs=[lib])


def test_handler_error_names_the_call():
    lib = _library()
    text = MODULE.replace("@xlac_test_scale(%x) {api_version = 4 : i32, mhlo.backend_config = {alpha = 1.5 : f32}}",
                          '@xlac_test_fail(%x) {api_version = 4 : i32, mhlo.backend_config = {reason = "no"}}')
    exe = xlac.compile(text, custom_call_libs=[lib], source_name="m.mlir")
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(Exception, match=r"\(target 'xlac_test_fail'\) at m.mlir:3:5 failed: no \(operand rank 2\)"):
        exe(x, x)


def test_library_not_found():
    with pytest.raises(Exception, match=r"cannot load custom-call library '/nonexistent/lib.so'"):
        xlac.compile(MODULE, custom_call_libs=["/nonexistent/lib.so"])
    with pytest.raises(TypeError, match="custom_call_libs takes shared library paths"):
        xlac.compile(MODULE, custom_call_libs=[3])
