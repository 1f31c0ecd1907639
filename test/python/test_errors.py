"""Wrong arguments and bad modules raise Python exceptions naming what is wrong; nothing crashes the process."""

import numpy as np
import pytest

import xlac

ADD = """HloModule add
ENTRY e {
  x = f32[2,3] parameter(0)
  y = f32[3] parameter(1)
  yy = f32[2,3] broadcast(y), dimensions={1}
  ROOT r = f32[2,3] add(x, yy)
}
"""


@pytest.fixture(scope="module")
def exe():
    return xlac.compile(ADD)


@pytest.mark.parametrize("run", ["compiled", "interpreter"])
def test_argument_count(exe, run):
    call = exe if run == "compiled" else (lambda *a: xlac.interpret(ADD, *a))
    with pytest.raises(TypeError, match=r"takes 2 parameters \(f32\[2,3\], f32\[3\]\), got 1"):
        call(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="got 3"):
        call(np.zeros((2, 3), np.float32), np.zeros(3, np.float32), np.zeros(3, np.float32))


@pytest.mark.parametrize("run", ["compiled", "interpreter"])
def test_argument_shape(exe, run):
    call = exe if run == "compiled" else (lambda *a: xlac.interpret(ADD, *a))
    with pytest.raises(ValueError, match=r"parameter 1 \(f32\[3\]\): expected shape \(3,\), got \(4,\)"):
        call(np.zeros((2, 3), np.float32), np.zeros(4, np.float32))
    with pytest.raises(ValueError, match=r"parameter 0 \(f32\[2,3\]\): expected shape \(2, 3\), got \(3, 2\)"):
        call(np.zeros((3, 2), np.float32), np.zeros(3, np.float32))


@pytest.mark.parametrize("run", ["compiled", "interpreter"])
def test_argument_dtype(exe, run):
    call = exe if run == "compiled" else (lambda *a: xlac.interpret(ADD, *a))
    with pytest.raises(TypeError, match=r"parameter 0 \(f32\[2,3\]\): expected dtype float32, got float64"):
        call(np.zeros((2, 3)), np.zeros(3, np.float32))
    with pytest.raises(TypeError, match=r"parameter 1 \(f32\[3\]\): expected dtype float32, got int32"):
        call(np.zeros((2, 3), np.float32), np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="parameter 1"):
        call(np.zeros((2, 3), np.float32), [1.0, "x", 2.0])


def test_parse_error_has_file_line_col():
    text = ADD.replace("add(x, yy)", "ad(x, yy)")
    with pytest.raises(xlac.CompileError) as info:
        xlac.compile(text, source_name="model.hlo")
    message = str(info.value)
    assert message.startswith("model.hlo:6:21: error: unknown opcode: ad"), message
    assert "^" in message  # the source line and a caret
    assert isinstance(info.value, ValueError) and isinstance(info.value, xlac.Error)
    with pytest.raises(xlac.CompileError, match=r"^<text>:6:21: error: unknown opcode"):
        xlac.interpret(text, np.zeros((2, 3), np.float32), np.zeros(3, np.float32))


def test_verifier_and_stablehlo_errors():
    bad_shape = ADD.replace("ROOT r = f32[2,3] add", "ROOT r = f32[3,2] add")
    with pytest.raises(xlac.CompileError, match=r"m\.hlo:6:8: error: instruction 'r' has shape f32\[3,2\]"):
        xlac.compile(bad_shape, source_name="m.hlo")
    mlir = """module {
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.bogus %a : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
"""
    with pytest.raises(xlac.CompileError, match=r"^f\.mlir:3:\d+: error: "):
        xlac.compile(mlir, source_name="f.mlir")


def test_sharding_error_is_located():
    # A sharding over 3 devices in a 2-partition program: the partitioner's error points at the parameter.
    text = """HloModule s, num_partitions=2
ENTRY e {
  x = f32[4] parameter(0), sharding={devices=[3]0,1,2}
  ROOT r = f32[4] negate(x)
}
"""
    with pytest.raises(xlac.CompileError, match=r"^s\.hlo:3:3: error: parameter %x: sharding .* uses 3 devices"):
        xlac.compile(text, source_name="s.hlo")
    with pytest.raises(xlac.CompileError, match=r"^s\.hlo:3:3: error: parameter %x"):
        xlac.interpret(text, np.zeros(4, np.float32), source_name="s.hlo")


def test_unimplemented_is_not_implemented_error():
    text = """HloModule cc
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] custom-call(p), custom_call_target="my_kernel"
}
"""
    with pytest.raises(NotImplementedError, match='custom-call.*"my_kernel"'):
        xlac.compile(text)
    with pytest.raises(xlac.UnimplementedError, match="unsupported custom call target my_kernel"):
        xlac.interpret(text, np.zeros(2, np.float32))


def test_tuple_parameters_are_not_supported():
    text = """HloModule t
ENTRY e {
  p = (f32[2], s32[]) parameter(0)
  ROOT g = f32[2] get-tuple-element(p), index=0
}
"""
    with pytest.raises(NotImplementedError, match=r"\(f32\[2\], s32\[\]\) is not an array"):
        xlac.compile(text)
    with pytest.raises(xlac.UnimplementedError, match=r"parameter 0 is \(f32\[2\], s32\[\]\), not an array"):
        xlac.interpret(text, np.zeros(2, np.float32))


def test_runtime_failure_is_xlac_runtime_error():
    # The interpreter refuses an intermediate beyond its memory limit when it gets there, at run time.
    text = """HloModule huge
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  c = f32[] parameter(0)
  b = f32[1000000,1000000] broadcast(c), dimensions={}
  z = f32[] constant(0)
  ROOT r = f32[] reduce(b, z), dimensions={0,1}, to_apply=add
}
"""
    with pytest.raises(xlac.RuntimeError, match="larger than the interpreter's limit") as info:
        xlac.interpret(text, 1.0)
    assert isinstance(info.value, RuntimeError)


def test_bad_options():
    with pytest.raises(ValueError, match="opt_level"):
        xlac.compile(ADD, opt_level=5)
    with pytest.raises(ValueError, match="num_partitions"):
        xlac.compile(ADD, num_partitions=-1)
    with pytest.raises(TypeError):
        xlac.compile(ADD, threads=1.5)
    with pytest.raises(TypeError, match="text"):
        xlac.compile(42)
    with pytest.raises(TypeError):
        xlac.compile(ADD, 2)  # options are keyword-only
