"""xlac.compile / Executable.__call__ / xlac.interpret on numpy arrays: results against numpy and the interpreter."""

import os

import numpy as np

import xlac

DOT_BIAS_RELU = """HloModule dense
ENTRY e {
  x = f32[8,16] parameter(0)
  w = f32[16,32] parameter(1)
  b = f32[32] parameter(2)
  d = f32[8,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,32] broadcast(b), dimensions={1}
  a = f32[8,32] add(d, bb)
  z = f32[] constant(0)
  zz = f32[8,32] broadcast(z), dimensions={}
  ROOT r = f32[8,32] maximum(a, zz)
}
"""

STABLEHLO_TUPLE = """module @m {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<4x8xf32>
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [1]
        : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    return %1, %2 : tensor<4x8xf32>, tensor<4xf32>
  }
}
"""

NESTED_TUPLE = """HloModule nested
ENTRY e {
  x = f32[3] parameter(0)
  y = s32[2,2] parameter(1)
  n = f32[3] negate(x)
  m = s32[2,2] multiply(y, y)
  inner = (s32[2,2], f32[3]) tuple(m, x)
  ROOT t = (f32[3], (s32[2,2], f32[3])) tuple(n, inner)
}
"""

ONE_TUPLE = """HloModule one
ENTRY e {
  x = f32[3] parameter(0)
  a = f32[3] abs(x)
  ROOT t = (f32[3]) tuple(a)
}
"""


def rng_arrays(infos, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, size=i.shape).astype(i.dtype) for i in infos]


def dense_reference(x, w, b):
    return np.maximum(x.astype(np.float64) @ w.astype(np.float64) + b, 0)


def test_dot_elementwise_against_numpy():
    exe = xlac.compile(DOT_BIAS_RELU)
    assert [p.shape for p in exe.parameters] == [(8, 16), (16, 32), (32,)]
    assert all(p.dtype == np.float32 and p.element_type == "f32" for p in exe.parameters)
    assert exe.results == [xlac.ArrayInfo((8, 32), np.dtype(np.float32), "f32")]
    assert str(exe.results[0]) == "f32[8,32]"
    assert exe.num_devices == 1 and not exe.partitioned and exe.spmd_report == ""
    x, w, b = rng_arrays(exe.parameters)
    out = exe(x, w, b)
    # A module returning one array returns the array itself, as a jitted JAX function does.
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == (8, 32)
    np.testing.assert_allclose(out, dense_reference(x, w, b), rtol=1e-5, atol=1e-5)
    ref = xlac.interpret(DOT_BIAS_RELU, x, w, b)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    # Executables are reusable; a second call with other inputs gives the new result, not a cached one.
    x2 = x * 2
    np.testing.assert_allclose(exe(x2, w, b), dense_reference(x2, w, b), rtol=1e-5, atol=1e-5)


def test_exact_mode_is_bit_identical_to_interpreter():
    exe = xlac.compile(DOT_BIAS_RELU, exact=True, opt_level=1, threads=1)
    args = rng_arrays(exe.parameters, seed=3)
    np.testing.assert_array_equal(exe(*args), xlac.interpret(DOT_BIAS_RELU, *args))


def test_non_contiguous_inputs_are_converted():
    exe = xlac.compile(DOT_BIAS_RELU)
    rng = np.random.default_rng(1)
    xt = rng.uniform(-1, 1, size=(16, 8)).astype(np.float32).T  # Fortran order
    wide = rng.uniform(-1, 1, size=(16, 64)).astype(np.float32)[:, ::2]  # strided
    b = rng.uniform(-1, 1, size=(32,)).astype(np.float32)
    assert not xt.flags.c_contiguous and not wide.flags.c_contiguous
    np.testing.assert_allclose(exe(xt, wide, b), dense_reference(xt, wide, b), rtol=1e-5, atol=1e-5)
    # Python lists take the parameter's dtype.
    np.testing.assert_allclose(
        exe(xt.tolist(), wide.tolist(), b.tolist()), dense_reference(xt, wide, b), rtol=1e-5, atol=1e-5
    )


def test_stablehlo_module_with_tuple_result():
    exe = xlac.compile(STABLEHLO_TUPLE, source_name="m.mlir")
    assert [str(r) for r in exe.results] == ["f32[4,8]", "f32[4]"]
    x, w = rng_arrays(exe.parameters, seed=2)
    prod, sums = exe(x, w)
    np.testing.assert_allclose(prod, x * w, rtol=1e-6)
    np.testing.assert_allclose(sums, (x * w).sum(axis=1), rtol=1e-5, atol=1e-6)
    ref = xlac.interpret(STABLEHLO_TUPLE, x, w)
    assert isinstance(ref, list) and len(ref) == 2
    np.testing.assert_allclose(prod, ref[0], rtol=1e-6)
    np.testing.assert_allclose(sums, ref[1], rtol=1e-5, atol=1e-6)


def test_nested_tuple_result_is_flattened():
    exe = xlac.compile(NESTED_TUPLE)
    assert [str(r) for r in exe.results] == ["f32[3]", "s32[2,2]", "f32[3]"]
    x = np.array([1.5, -2.0, 0.25], np.float32)
    y = np.array([[1, -2], [3, 40000]], np.int32)
    for outs in (exe(x, y), xlac.interpret(NESTED_TUPLE, x, y)):
        assert isinstance(outs, list) and len(outs) == 3
        np.testing.assert_array_equal(outs[0], -x)
        np.testing.assert_array_equal(outs[1], y * y)  # 40000^2 wraps in s32, as in numpy
        np.testing.assert_array_equal(outs[2], x)


def test_one_element_tuple_stays_a_list():
    x = np.array([1.0, -2.0, 3.0], np.float32)
    outs = xlac.compile(ONE_TUPLE)(x)
    assert isinstance(outs, list) and len(outs) == 1
    np.testing.assert_array_equal(outs[0], np.abs(x))


def test_scalar_parameters_take_python_numbers():
    text = """HloModule s
ENTRY e {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] convert(b)
  ROOT r = f32[] multiply(a, c)
}
"""
    exe = xlac.compile(text)
    assert [p.shape for p in exe.parameters] == [(), ()]
    out = exe(2.5, 4)
    assert out.shape == () and out.dtype == np.float32 and float(out) == 10.0
    assert float(exe(np.float32(1.5), np.int32(-2))) == -3.0
    assert float(xlac.interpret(text, 2.5, 4)) == 10.0


def test_example_mlp_compiles_from_file(source_dir):
    with open(os.path.join(source_dir, "examples", "mlp.hlo")) as f:
        text = f.read()
    exe = xlac.compile(text, source_name="mlp.hlo")
    assert exe.partitioned and exe.num_devices == 2
    x, w, b = rng_arrays(exe.parameters, seed=5)
    want = np.maximum(x.astype(np.float64) @ w + b, 0).sum(axis=1)
    np.testing.assert_allclose(exe(x, w, b), want, rtol=1e-4, atol=1e-4)


def test_zero_size_and_byte_swapped_arrays():
    text = """HloModule z
ENTRY e {
  x = f32[0,3] parameter(0)
  y = f32[3] parameter(1)
  ROOT r = f32[3] negate(y)
}
"""
    exe = xlac.compile(text)
    y = np.array([1.0, -2.0, 3.5], ">f4")  # big-endian: converted to native order
    out = exe(np.zeros((0, 3), np.float32), y)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [-1.0, 2.0, -3.5])
    np.testing.assert_array_equal(xlac.interpret(text, np.zeros((0, 3), np.float32), y), [-1.0, 2.0, -3.5])


def test_large_result_is_aligned_and_correct():
    # 16 MiB: the compiled loop writes it with streaming stores straight into the returned array, which the API
    # allocates 64-byte aligned for that.
    exe = xlac.compile("""HloModule big
ENTRY e {
  a = f32[4096,1024] parameter(0)
  b = f32[4096,1024] parameter(1)
  ROOT r = f32[4096,1024] multiply(a, b)
}
""")
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4096, 1024), dtype=np.float32)
    b = rng.standard_normal((4096, 1024), dtype=np.float32)
    for _ in range(2):
        out = exe(a, b)
        assert out.ctypes.data % 64 == 0
        assert out.shape == (4096, 1024) and out.dtype == np.float32
        np.testing.assert_array_equal(out, a * b)
