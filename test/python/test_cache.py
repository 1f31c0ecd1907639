"""xlac.compile(cache_dir=...): the persistent compilation cache (docs/cache.md) from Python."""
import os

import numpy as np
import pytest

import xlac

MODULE = """
HloModule py_cache
ENTRY e {
  x = f32[4,8] parameter(0)
  w = f32[8,3] parameter(1)
  ROOT d = f32[4,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def _args():
    rng = np.random.default_rng(3)
    return rng.standard_normal((4, 8), dtype=np.float32), rng.standard_normal((8, 3), dtype=np.float32)


def test_second_compile_hits_and_matches(tmp_path):
    x, w = _args()
    reference = xlac.compile(MODULE)(x, w)
    first = xlac.compile(MODULE, cache_dir=tmp_path)
    assert not first.cache_hit
    assert "cache: stored" in first.cache_report
    second = xlac.compile(MODULE, cache_dir=str(tmp_path))
    assert second.cache_hit, second.cache_report
    np.testing.assert_array_equal(second(x, w), reference)
    np.testing.assert_array_equal(first(x, w), reference)


def test_miss_names_the_differing_option(tmp_path):
    xlac.compile(MODULE, cache_dir=tmp_path)
    exe = xlac.compile(MODULE, cache_dir=tmp_path, opt_level=3)
    assert not exe.cache_hit
    assert "opt_level: cached '2', now '3'" in exe.cache_report


def test_readonly_writes_nothing(tmp_path):
    cache = tmp_path / "ro"
    exe = xlac.compile(MODULE, cache_dir=cache, cache_readonly=True)
    assert not exe.cache_hit
    assert not cache.exists()


def test_environment_variable_is_the_default(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAC_CACHE_DIR", str(tmp_path))
    xlac.compile(MODULE)
    assert xlac.compile(MODULE).cache_hit
    monkeypatch.delenv("XLAC_CACHE_DIR")
    assert xlac.compile(MODULE).cache_report == ""


def test_bad_max_bytes():
    with pytest.raises(ValueError, match="cache_max_bytes"):
        xlac.compile(MODULE, cache_dir="unused", cache_max_bytes=0)
