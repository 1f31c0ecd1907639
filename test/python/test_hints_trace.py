"""metrics_report()'s "too frequent" hints and xlac.start_trace()/stop_trace() (docs/observability.md)."""

import json
import os
import re

import numpy as np
import pytest

import xlac
from test_observe import MLP8

ADD = """HloModule add{n}
ENTRY %main (x: f32[{n}]) -> f32[{n}] {{
  %x = f32[{n}] parameter(0)
  ROOT %y = f32[{n}] add(%x, %x)
}}
"""

HINT_FREQUENT = re.compile(r"^xlac-profiler: CompileTime too frequent: (\d+) counts during (\d+) executions$", re.M)
HINT_SAME = re.compile(r"^xlac-profiler: module '(\w+)' \([0-9a-f]{8}\) compiled (\d+) times: ", re.M)


def test_many_distinct_modules_run_once_each_give_the_frequency_hint():
    xlac.clear_metrics()
    warmup = 10  # codegen::Metrics::kCompileWarmup
    for n in range(1, warmup + 1):
        exe = xlac.compile(ADD.format(n=n), opt_level=0)
        exe(np.ones(n, np.float32))
    # Ten compilations are the warm-up: no hint yet, and distinct modules are no "same module" hint either.
    report = xlac.metrics_report()
    assert not HINT_FREQUENT.search(report) and not HINT_SAME.search(report), report
    exe = xlac.compile(ADD.format(n=warmup + 1), opt_level=0)
    exe(np.ones(warmup + 1, np.float32))
    m = HINT_FREQUENT.search(xlac.metrics_report())
    assert m and (int(m.group(1)), int(m.group(2))) == (11, 11)
    # Running what was compiled many more times makes compiling rare again: the hint goes away.
    x = np.ones(warmup + 1, np.float32)
    for _ in range(12):
        exe(x)
    assert not HINT_FREQUENT.search(xlac.metrics_report())
    xlac.clear_metrics()


def test_compiling_the_same_module_again_gives_the_recompile_hint():
    xlac.clear_metrics()
    text = ADD.format(n=4)
    for i in range(3):  # codegen::Metrics::kRecompileThreshold
        assert not HINT_SAME.search(xlac.metrics_report())
        xlac.compile(text, opt_level=0)(np.ones(4, np.float32))
    report = xlac.metrics_report()
    hints = HINT_SAME.findall(report)
    assert hints == [("add4", "3")], report
    # The hints come last, after the counters, as PyTorch/XLA's analysis lines follow its report.
    assert report.rstrip("\n").splitlines()[-1].startswith("xlac-profiler: module 'add4'")
    # Other options make another program: not the same module.
    xlac.clear_metrics()
    xlac.compile(text, opt_level=0)
    xlac.compile(text, opt_level=1)
    xlac.compile(text, opt_level=2)
    assert not HINT_SAME.search(xlac.metrics_report())
    xlac.clear_metrics()


def test_trace_has_one_track_per_core_with_kernel_slices(tmp_path):
    xlac.start_trace(tmp_path / "t")
    with pytest.raises(xlac.RuntimeError):
        xlac.start_trace(tmp_path / "u")
    exe = xlac.compile(MLP8)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(p.shape).astype(np.float32) for p in exe.parameters]
    exe(*args)
    exe(*args)
    path = xlac.stop_trace()
    assert path == os.path.join(tmp_path / "t", "xlac_trace.json")
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names[0] == "compile"
    assert sorted(v for k, v in names.items() if k != 0) == [f"core {c}" for c in range(8)]
    slices = [e for e in events if e["ph"] == "X"]
    assert any(e["tid"] == 0 and e["cat"] == "frontend" for e in slices)  # compile phases
    for core in range(8):
        mine = [e for e in slices if e["tid"] == core + 1]
        assert sum(e["cat"] == "execute" for e in mine) == 2  # the two runs
        kernels = [e for e in mine if e["cat"] not in ("execute", "collective")]
        collectives = [e for e in mine if e["cat"] == "collective"]
        assert kernels and all(e["dur"] >= 0 for e in kernels)
        assert collectives and all(e["args"]["bytes_sent"] > 0 for e in collectives)
    with pytest.raises(xlac.RuntimeError):
        xlac.stop_trace()


def test_runs_outside_a_trace_are_not_recorded_and_old_executables_have_no_kernel_slices(tmp_path):
    exe = xlac.compile(ADD.format(n=8), opt_level=0)  # compiled before the trace: no trace hooks
    x = np.ones(8, np.float32)
    exe(x)  # not traced
    with xlac.trace(tmp_path / "out.json") as t:
        exe(x)
    assert t.path == str(tmp_path / "out.json")
    with open(t.path) as f:
        events = json.load(f)["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert [e["cat"] for e in slices] == ["execute"]  # one run, on core 0, no kernels, no compile phases
    assert slices[0]["tid"] == 1
