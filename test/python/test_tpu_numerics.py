"""TPU dot numerics (CompileOptions::tpu_numerics, docs/numerics.md) against a numpy model of a TPU's matrix unit.

At DEFAULT precision a TPU rounds f32 dot operands to bf16 (round to nearest even) and accumulates the products in
f32. The model below does that with numpy: operands rounded to bf16 with integer arithmetic on the bit patterns, each
product exact in f32 (8-bit significands), accumulated in f32 in xlac's documented order (over the contracting
dimension, from +0). That is the whole of xlac's TPU numerics, so the compiled MLP must equal the model bit for bit,
in exact and in default mode (a fused multiply-add of an exact product rounds like the separate add). On a CPU with
AVX512_BF16 the default mode's GEMM runs on vdpbf16ps, which adds each pair of products (k, k+1) in the order k+1,
then k (docs/numerics.md, "bf16 dots on AVX512_BF16"): the default mode then equals the model with that order, bit
for bit (no denormals arise here, so its flushing does not show).
"""

import os

import numpy as np
import pytest

import xlac


def round_to_bf16(x):
    """f32 -> the nearest bf16 value (ties to even), as f32. Inputs here are finite."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def matmul_f32_sequential(a, b):
    """a @ b summed over k in order in f32 (each partial sum rounded), from +0."""
    acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for k in range(a.shape[1]):
        acc += a[:, k : k + 1] * b[k : k + 1, :]
    return acc


def matmul_f32_pairs(a, b):
    """a @ b as vdpbf16ps sums it: pairs (k, k+1) in order, within a pair k+1 first, in f32 from +0."""
    acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for k in range(0, a.shape[1], 2):
        if k + 1 < a.shape[1]:
            acc += a[:, k + 1 : k + 2] * b[k + 1 : k + 2, :]
        acc += a[:, k : k + 1] * b[k : k + 1, :]
    return acc


def host_has_avx512_bf16():
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx512_bf16" in line for line in f)
    except OSError:
        return False


def mlp_model(params, bf16, pairs=False):
    """The MLP (three dense layers, ReLU between) with each dot as the matrix unit computes it (bf16=True; in
    vdpbf16ps's pair order with pairs=True), or with f32 operands and exact sums (bf16=False), the contrast that
    shows the rounding matters."""
    x, w1, b1, w2, b2, w3, b3 = params

    def dense(h, w, b):
        if bf16:
            matmul = matmul_f32_pairs if pairs else matmul_f32_sequential
            return matmul(round_to_bf16(h), round_to_bf16(w)) + b
        return (h.astype(np.float64) @ w.astype(np.float64)).astype(np.float32) + b

    h = np.maximum(dense(x, w1, b1), np.float32(0))
    h = np.maximum(dense(h, w2, b2), np.float32(0))
    return dense(h, w3, b3)


def mlp_text(n, d_in, d_hidden, d_out):
    return f"""HloModule mlp
ENTRY e {{
  x = f32[{n},{d_in}] parameter(0)
  w1 = f32[{d_in},{d_hidden}] parameter(1)
  b1 = f32[{d_hidden}] parameter(2)
  w2 = f32[{d_hidden},{d_hidden}] parameter(3)
  b2 = f32[{d_hidden}] parameter(4)
  w3 = f32[{d_hidden},{d_out}] parameter(5)
  b3 = f32[{d_out}] parameter(6)
  zero = f32[] constant(0)
  zb1 = f32[{n},{d_hidden}] broadcast(zero), dimensions={{}}
  bb1 = f32[{n},{d_hidden}] broadcast(b1), dimensions={{1}}
  bb2 = f32[{n},{d_hidden}] broadcast(b2), dimensions={{1}}
  bb3 = f32[{n},{d_out}] broadcast(b3), dimensions={{1}}
  d1 = f32[{n},{d_hidden}] dot(x, w1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  h1 = f32[{n},{d_hidden}] maximum(f32[{n},{d_hidden}] add(d1, bb1), zb1)
  d2 = f32[{n},{d_hidden}] dot(h1, w2), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  h2 = f32[{n},{d_hidden}] maximum(f32[{n},{d_hidden}] add(d2, bb2), zb1)
  d3 = f32[{n},{d_out}] dot(h2, w3), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  ROOT r = f32[{n},{d_out}] add(d3, bb3)
}}
"""


def random_params(n, d_in, d_hidden, d_out, seed=0):
    rng = np.random.default_rng(seed)
    dims = [(n, d_in), (d_in, d_hidden), (d_hidden,), (d_hidden, d_hidden), (d_hidden,), (d_hidden, d_out), (d_out,)]
    params = []
    for shape in dims:
        scale = 1.0 / np.sqrt(shape[0]) if len(shape) == 2 and shape[0] != n else 1.0
        params.append((rng.uniform(-1, 1, size=shape) * scale).astype(np.float32))
    return params


def relative_error(got, want):
    return float(np.max(np.abs(got.astype(np.float64) - want)) / np.max(np.abs(want)))


def check_against_models(text, params):
    model_bf16 = mlp_model(params, bf16=True)
    model_f32 = mlp_model(params, bf16=False)
    model_default = mlp_model(params, bf16=True, pairs=True) if host_has_avx512_bf16() else model_bf16
    for exact in (True, False):
        got = xlac.compile(text, tpu_numerics=True, exact=exact)(*params)
        want = model_bf16 if exact else model_default
        assert np.array_equal(got, want), (exact, relative_error(got, want))
    # Plain f32 numerics are the other model, far from the bf16 one.
    plain = xlac.compile(text)(*params)
    assert relative_error(plain, model_f32) < 1e-5
    assert relative_error(model_bf16, model_f32) > 100 * relative_error(plain, model_f32)


def test_round_to_bf16_ties_to_even():
    x = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-9, -(1 + 2**-7 + 2**-9)], dtype=np.float32)
    want = np.array([1.0, 1.0, 1 + 2**-6, 1.0, -(1 + 2**-7)], dtype=np.float32)
    assert np.array_equal(round_to_bf16(x), want)


def test_small_mlp_matches_the_bf16_model():
    check_against_models(mlp_text(16, 96, 160, 48), random_params(16, 96, 160, 48))


def test_peer_mlp_matches_the_bf16_model(source_dir):
    path = os.path.join(source_dir, "..", "shared", "peers", "hlo", "mlp_fwd.hlo")
    if not os.path.exists(path):
        pytest.skip(f"{path} is absent")
    with open(path) as f:
        text = f.read()
    check_against_models(text, random_params(256, 1024, 4096, 1024, seed=1))
