"""Sharded modules: partitioned programs take and return global arrays and equal the unpartitioned program."""

import numpy as np
import pytest

import xlac

# The contracting dimension split 4 ways (partial sums, then an all-reduce), results resharded 2x2 and replicated.
SHARDED = """HloModule sharded, num_partitions=4
ENTRY e {
  x = f32[8,16] parameter(0), sharding={devices=[1,4]0,1,2,3}
  w = f32[16,12] parameter(1), sharding={devices=[4,1]0,1,2,3}
  b = f32[12] parameter(2), sharding={replicated}
  d = f32[8,12] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,12] broadcast(b), dimensions={1}
  a = f32[8,12] add(d, bb)
  t = f32[8,12] tanh(a), sharding={devices=[2,2]0,1,2,3}
  ROOT r = (f32[8,12], f32[8,12]) tuple(t, a), sharding={{devices=[2,2]0,1,2,3}, {replicated}}
}
"""

# Rows split over 2 partitions; every partition's rows are independent, so no collective is needed.
ROWS = """HloModule rows
ENTRY e {
  x = s32[6,4] parameter(0), sharding={devices=[2,1]0,1}
  y = s32[6,4] multiply(x, x)
  ROOT r = s32[6,4] add(y, x), sharding={devices=[2,1]0,1}
}
"""


def arrays(seed):
    rng = np.random.default_rng(seed)
    return (
        rng.uniform(-1, 1, (8, 16)).astype(np.float32),
        rng.uniform(-1, 1, (16, 12)).astype(np.float32),
        rng.uniform(-1, 1, (12,)).astype(np.float32),
    )


def test_partitioned_equals_unpartitioned_and_interpreter():
    part = xlac.compile(SHARDED)
    assert part.partitioned and part.num_devices == 4
    assert "all-reduce" in part.spmd_report and "4 partitions" in part.spmd_report
    # Global shapes, not shards.
    assert [p.shape for p in part.parameters] == [(8, 16), (16, 12), (12,)]
    assert [r.shape for r in part.results] == [(8, 12), (8, 12)]

    whole = xlac.compile(SHARDED, partition=False, num_partitions=1)
    assert not whole.partitioned and whole.num_devices == 1 and whole.spmd_report == ""

    x, w, b = arrays(0)
    got = part(x, w, b)
    want = whole(x, w, b)
    ref_partitioned = xlac.interpret(SHARDED, x, w, b)
    ref_global = xlac.interpret(SHARDED, x, w, b, partition=False, num_partitions=1)
    a = x.astype(np.float64) @ w + b
    for name, r in [("unpartitioned", want), ("interpreter", ref_partitioned), ("interpreter global", ref_global)]:
        for g, e in zip(got, r):
            # The all-reduce sums the four partial dots in another order than one dot does.
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(got[1], a, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[0], np.tanh(a), rtol=1e-5, atol=1e-5)


def test_a_module_without_the_attribute_partitions_on_the_devices_its_shardings_name():
    # PyTorch/XLA's modules leave num_partitions out: the shardings name 2 devices, so the module runs on 2, as it
    # does with num_partitions=2 given; partition=False runs it whole on one device.
    x = np.arange(24, dtype=np.int32).reshape(6, 4) - 7
    inferred = xlac.compile(ROWS)
    assert inferred.partitioned and inferred.num_devices == 2
    exe = xlac.compile(ROWS, num_partitions=2)
    assert exe.partitioned and exe.num_devices == 2
    single = xlac.compile(ROWS, partition=False, num_partitions=1)
    assert not single.partitioned and single.num_devices == 1
    want = x * x + x
    np.testing.assert_array_equal(exe(x), want)
    np.testing.assert_array_equal(inferred(x), want)
    np.testing.assert_array_equal(single(x), want)
    np.testing.assert_array_equal(xlac.interpret(ROWS, x, num_partitions=2), want)
    # Unpartitioned on two devices: both run the global program, the result is device 0's.
    dup = xlac.compile(ROWS, num_partitions=2, partition=False)
    assert not dup.partitioned and dup.num_devices == 2
    np.testing.assert_array_equal(dup(x), want)


def test_partitioned_runs_repeat():
    exe = xlac.compile(SHARDED)
    for seed in range(3):
        x, w, b = arrays(seed)
        got = exe(x, w, b)
        np.testing.assert_allclose(got[1], x.astype(np.float64) @ w + b, rtol=1e-5, atol=1e-5)


# JAX's Shardy export: a 2x2 mesh, x split on rows over "x", w on columns over "y".
SHARDY = """module @jit_f attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
      -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]
        : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %1 = stablehlo.tanh %0 : tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}
"""


def test_stablehlo_shardy_module():
    exe = xlac.compile(SHARDY, source_name="f.mlir")
    assert exe.partitioned and exe.num_devices == 4
    assert "0 collectives" in exe.spmd_report
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    w = rng.uniform(-1, 1, (16, 4)).astype(np.float32)
    got = exe(x, w)
    assert got.shape == (8, 4)
    np.testing.assert_allclose(got, np.tanh(x.astype(np.float64) @ w), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, xlac.interpret(SHARDY, x, w, partition=False), rtol=1e-5, atol=1e-6)


# PyTorch/XLA's tt.mark_argument only annotates its operand; declared an identity it becomes a copy before
# partitioning, so the row-sharded argument stays sharded and no collective is inserted.
MARKED = """HloModule marked, num_partitions=2
ENTRY e {
  x = f32[6,4] parameter(0), sharding={devices=[2,1]0,1}
  m = f32[6,4] custom-call(x), custom_call_target="tt.mark_argument", frontend_attributes={ttir.name="args_0"}
  ROOT r = f32[6,4] tanh(m), sharding={devices=[2,1]0,1}
}
"""


def test_custom_call_identity():
    x = np.random.default_rng(3).uniform(-1, 1, (6, 4)).astype(np.float32)
    with pytest.raises(NotImplementedError, match="--custom-call-identity=tt.mark_argument"):
        xlac.compile(MARKED)
    exe = xlac.compile(MARKED, custom_call_identity=["tt.mark_argument"], exact=True)
    assert exe.partitioned
    assert "0 collectives inserted" in exe.spmd_report
    out = exe(x)
    np.testing.assert_array_equal(out, xlac.interpret(MARKED, x, custom_call_identity="tt.mark_argument"))
    np.testing.assert_allclose(out, np.tanh(x), rtol=1e-6)
    with pytest.raises(TypeError, match="custom_call_identity takes custom-call target names"):
        xlac.compile(MARKED, custom_call_identity=[""])
