"""C++ custom-call kernels (custom_call_sources=, docs/custom_calls.md): Clang compiles them in process, the compiled
program inlines them, and interpret() runs the same compiled kernels."""

import math
import os

import numpy as np
import pytest

import xlac

KERNELS = """#include <xlac/custom_call.h>
#include <cmath>

XLAC_ELEMENTWISE("py.softsign")
float Softsign(float x) { return x / (1.0f + std::fabs(x)); }

XLAC_ELEMENTWISE("py.axpb")
double Axpb(double x, double a, int32_t b) { return a * x + b; }
"""

MODULE = """HloModule kernels
ENTRY main {
  x = f32[3,4] parameter(0)
  d = f64[3,4] parameter(1)
  a = f64[] constant(2.5)
  b = s32[] constant(-3)
  s = f32[3,4] custom-call(x), custom_call_target="py.softsign"
  y = f32[3,4] add(s, x)
  z = f64[3,4] custom-call(d, a, b), custom_call_target="py.axpb"
  ROOT t = (f32[3,4], f64[3,4]) tuple(y, z)
}
"""


@pytest.fixture
def kernels(tmp_path):
    path = tmp_path / "kernels.cc"
    path.write_text(KERNELS)
    return path


def _inputs():
    rng = np.random.default_rng(3)
    return rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4))


def test_compiled_and_interpreted_kernels_agree(kernels):
    x, d = _inputs()
    exe = xlac.compile(MODULE, custom_call_sources=[kernels], exact=True)
    y, z = exe(x, d)
    want_y = x / (np.float32(1) + np.abs(x)) + x
    np.testing.assert_allclose(y, want_y, rtol=1e-6)
    np.testing.assert_array_equal(z, 2.5 * d - 3)
    ref_y, ref_z = xlac.interpret(MODULE, x, d, custom_call_sources=[kernels])
    # Exact mode and the interpreter run the same compiled kernel: bit for bit.
    np.testing.assert_array_equal(y, ref_y)
    np.testing.assert_array_equal(z, ref_z)


def test_clang_errors_are_compile_errors(tmp_path):
    bad = tmp_path / "bad.cc"
    bad.write_text('#include <xlac/custom_call.h>\nXLAC_ELEMENTWISE("py.softsign")\nfloat F(float x) { return y; }\n')
    with pytest.raises(xlac.CompileError, match=r"bad\.cc:3:27: error: use of undeclared identifier 'y'"):
        xlac.compile(MODULE, custom_call_sources=[bad])


def test_signature_mismatch_points_at_both_sides(kernels):
    wrong = MODULE.replace('s = f32[3,4] custom-call(x)', 's = f32[3,4] custom-call(x, x)')
    with pytest.raises(xlac.CompileError) as error:
        xlac.compile(wrong, custom_call_sources=[kernels])
    message = str(error.value)
    assert "custom call s has 2 operand(s), but the kernel Softsign for \"py.softsign\" takes 1 (f32) -> f32" in message
    assert "kernels.cc:5:7: note: the kernel Softsign for \"py.softsign\" is declared here" in message


def test_sources_must_be_paths():
    with pytest.raises(TypeError, match="custom_call_sources takes C\\+\\+ file paths"):
        xlac.compile(MODULE, custom_call_sources=[3])


def test_neuron_gelu_example_matches_the_interpreter():
    """examples/custom_call: torch-neuronx's GELU custom call with its C++ kernel, compiled and interpreted."""
    here = os.path.abspath(__file__)
    root = os.environ.get("XLAC_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(here)))
    example = os.path.join(root, "examples", "custom_call")
    text = open(os.path.join(example, "mlp_gelu.hlo")).read()
    kernels = [os.path.join(example, "neuron_gelu.cc")]
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    got = xlac.compile(text, custom_call_sources=kernels, exact=True)(x, w, b)
    want = xlac.interpret(text, x, w, b, custom_call_sources=kernels)
    np.testing.assert_array_equal(got, want)
    # And it is GELU: x * Phi(x), summed per row.
    h = (x @ w + b).astype(np.float64)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(got, (0.5 * h * (1 + erf(h / math.sqrt(2)))).sum(axis=1), rtol=1e-4, atol=1e-4)
