"""Element types between numpy and xlac: plain numpy types, pred as bool, bf16 as raw uint16 or ml_dtypes."""

import numpy as np
import pytest

import xlac

PLAIN = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "c64", "c128"]


def square_module(t):
    return f"HloModule sq\nENTRY e {{\n  p = {t}[5] parameter(0)\n  ROOT r = {t}[5] multiply(p, p)\n}}\n"


@pytest.mark.parametrize("element_type", PLAIN)
def test_plain_types_round_trip(element_type):
    dtype = xlac.numpy_dtype(element_type)
    text = square_module(element_type)
    exe = xlac.compile(text)
    assert exe.parameters[0].dtype == dtype and exe.results[0].dtype == dtype
    if dtype.kind == "c":
        x = np.array([1 + 2j, -3j, 0.5, 2 - 1j, 7], dtype)
    elif dtype.kind == "f":
        x = np.array([1.5, -2.0, 0.25, 3.0, -100.0], dtype)
    else:
        # Large values wrap, in numpy and in xlac alike.
        x = np.array([3, np.iinfo(dtype).max, np.iinfo(dtype).min, 0, 11], dtype)
    with np.errstate(over="ignore"):
        want = x * x
    out = exe(x)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(xlac.interpret(text, x), want)


MIXED = """HloModule mixed
ENTRY e {
  a = s32[4] parameter(0)
  p = pred[4] parameter(1)
  d = f64[4] parameter(2)
  b = bf16[4] parameter(3)
  a2 = s32[4] multiply(a, a)
  np = pred[4] not(p)
  two = f64[] constant(2)
  d2 = f64[4] broadcast(two), dimensions={}
  dd = f64[4] multiply(d, d2)
  sel = f64[4] select(p, d, dd)
  bb = bf16[4] add(b, b)
  bf = f32[4] convert(b)
  ROOT t = (s32[4], pred[4], f64[4], bf16[4], f32[4]) tuple(a2, np, sel, bb, bf)
}
"""


def bf16_bits(values):
    """bf16 bit patterns of values exactly representable in bf16."""
    bits = np.asarray(values, np.float32).view(np.uint32)
    assert np.all(bits & 0xFFFF == 0)
    return (bits >> 16).astype(np.uint16)


def test_s32_pred_f64_and_bf16_raw_view():
    exe = xlac.compile(MIXED)
    types = [p.element_type for p in exe.parameters]
    assert types == ["s32", "pred", "f64", "bf16"]
    assert exe.parameters[1].dtype == np.bool_ and exe.parameters[2].dtype == np.float64
    a = np.array([-3, 7, 46341, 0], np.int32)
    p = np.array([True, False, True, False])
    d = np.array([0.1, 1e300, -2.5, np.pi], np.float64)
    b = bf16_bits([1.5, -2.0, 0.25, 96.0])
    expect_bf16_raw = xlac.ml_dtypes is None
    if expect_bf16_raw:
        assert exe.parameters[3].dtype == np.uint16
    for outs in (exe(a, p, d, b), xlac.interpret(MIXED, a, p, d, b)):
        a2, notp, sel, bb, bf = outs
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(a2, a * a)
        assert notp.dtype == np.bool_
        np.testing.assert_array_equal(notp, ~p)
        assert sel.dtype == np.float64
        np.testing.assert_array_equal(sel, np.where(p, d, d * 2))  # f64 all the way: 1e300*2 does not overflow f64
        np.testing.assert_array_equal(bb.view(np.uint16), bf16_bits([3.0, -4.0, 0.5, 192.0]))
        np.testing.assert_array_equal(bf, np.array([1.5, -2.0, 0.25, 96.0], np.float32))


def test_bf16_with_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    exe = xlac.compile(MIXED)
    assert exe.parameters[3].dtype == ml_dtypes.bfloat16
    b = np.array([1.5, -2.0, 0.25, 96.0], ml_dtypes.bfloat16)
    outs = exe(np.zeros(4, np.int32), np.zeros(4, bool), np.zeros(4), b)
    assert outs[3].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(outs[3].astype(np.float32), [3.0, -4.0, 0.5, 192.0])
    # Raw bit patterns are accepted too.
    outs = exe(np.zeros(4, np.int32), np.zeros(4, bool), np.zeros(4), b.view(np.uint16))
    np.testing.assert_array_equal(outs[3].astype(np.float32), [3.0, -4.0, 0.5, 192.0])


def test_f8_raw_bits():
    text = """HloModule f8
ENTRY e {
  x = f8e4m3fn[4] parameter(0)
  ROOT y = f32[4] convert(x)
}
"""
    exe = xlac.compile(text)
    if xlac.ml_dtypes is None:
        assert exe.parameters[0].dtype == np.uint8
    # e4m3fn: bias 7; 0x38 = 1.0, 0x40 = 2.0, 0xB8 = -1.0, 0x7E = 448 (largest finite).
    bits = np.array([0x38, 0x40, 0xB8, 0x7E], np.uint8)
    want = np.array([1.0, 2.0, -1.0, 448.0], np.float32)
    np.testing.assert_array_equal(exe(bits), want)
    np.testing.assert_array_equal(xlac.interpret(text, bits), want)


def test_numpy_dtype_table():
    assert xlac.numpy_dtype("pred") == np.bool_
    assert xlac.numpy_dtype("c64") == np.complex64
    if xlac.ml_dtypes is None:
        assert xlac.numpy_dtype("bf16") == np.uint16
        assert xlac.numpy_dtype("f8e5m2") == np.uint8
        assert xlac.numpy_dtype("s4") == np.int8
    with pytest.raises(ValueError, match="token"):
        xlac.numpy_dtype("token")


def test_ml_dtypes_types_are_used_when_present(monkeypatch):
    # A stand-in ml_dtypes whose "bfloat16" is numpy's float16 (also two bytes) and which lacks the f8 types, as an
    # older ml_dtypes might: bf16 takes its type, f8 falls back to raw bits, raw uint16 input stays accepted.
    import types

    monkeypatch.setattr(xlac, "ml_dtypes", types.SimpleNamespace(bfloat16=np.float16))
    assert xlac.numpy_dtype("bf16") == np.float16
    assert xlac.numpy_dtype("f8e4m3fn") == np.uint8
    exe = xlac.compile(MIXED)
    assert exe.parameters[3].dtype == np.float16 and exe.results[3].dtype == np.float16
    args = (np.zeros(4, np.int32), np.zeros(4, bool), np.zeros(4))
    b = bf16_bits([1.5, -2.0, 0.25, 96.0])
    for bits in (b, b.view(np.float16)):
        outs = exe(*args, bits)
        assert outs[3].dtype == np.float16
        np.testing.assert_array_equal(outs[3].view(np.uint16), bf16_bits([3.0, -4.0, 0.5, 192.0]))
    with pytest.raises(TypeError, match=r"parameter 3 \(bf16\[4\]\): expected dtype float16, got float32"):
        exe(*args, np.zeros(4, np.float32))
