"""xlac.metrics_report() and compile(dump_to=) (docs/observability.md)."""

import os
import re

import numpy as np

import xlac

# FSDP-style: weights sharded on 8 cores and all-gathered, the second dot's partial sums all-reduced.
MLP8 = """HloModule mlp8, num_partitions=8
ENTRY %main (x: f32[16,64], w1: f32[64,128], w2: f32[128,32]) -> f32[16,32] {
  %x = f32[16,64] parameter(0), sharding={devices=[8,1]<=[8]}
  %w1 = f32[64,128] parameter(1), sharding={devices=[8,1]<=[8]}
  %w2 = f32[128,32] parameter(2), sharding={devices=[8,1]<=[8]}
  %w1.full = f32[64,128] copy(%w1), sharding={replicated}
  %h = f32[16,128] dot(%x, %w1.full), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[1,8]<=[8]}
  %zero = f32[] constant(0)
  %zeros = f32[16,128] broadcast(%zero), dimensions={}
  %relu = f32[16,128] maximum(%h, %zeros), sharding={devices=[1,8]<=[8]}
  ROOT %y = f32[16,32] dot(%relu, %w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
}
"""


def _metric(report, name):
    m = re.search(r"^Metric: " + re.escape(name) + r"\n  TotalSamples: (\d+)\n  Accumulator: ([^\n]*)\n", report, re.M)
    assert m, f"no metric {name} in:\n{report}"
    return int(m.group(1)), m.group(2)


def _bytes(accumulator):
    return int(re.search(r"(\d+)B\)?$", accumulator).group(1))


def test_metrics_report_counts_compiles_runs_and_collective_bytes():
    xlac.clear_metrics()
    exe = xlac.compile(MLP8)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(p.shape).astype(np.float32) for p in exe.parameters]
    for _ in range(3):
        exe(*args)
    report = xlac.metrics_report()
    assert _metric(report, "CompileTime")[0] == 1
    assert _metric(report, "ExecuteTime")[0] == 3
    # Fusion runs twice per compile: before the partitioner and after layout assignment (docs/passes.md).
    assert _metric(report, "PhaseTime.pass fusion")[0] == 2
    assert re.search(r"^Counter: Executions\n  Value: 3$", report, re.M)
    assert re.search(r"^Counter: UncachedCompile\n  Value: 1$", report, re.M)
    # The bytes each core sends per kind are what the SPMD report predicts, per run.
    predicted = {}
    for m in re.finditer(r"^  (\S+) %\S+ for %\S+: group of \d+, (\d+) bytes per core$", exe.spmd_report, re.M):
        predicted[m.group(1)] = predicted.get(m.group(1), 0) + int(m.group(2))
    assert set(predicted) == {"all-gather", "all-reduce"}
    for core in range(8):
        for kind, per_run in predicted.items():
            samples, accumulator = _metric(report, f"Core{core}.CollectiveBytesSent.{kind}")
            assert samples == 3
            assert _bytes(accumulator) == 3 * per_run
    xlac.clear_metrics()
    assert xlac.metrics_report() == ""


def test_dump_to_writes_numbered_files(tmp_path):
    exe = xlac.compile(MLP8, dump_to=tmp_path, dump_pass_regex="^fusion$")
    files = sorted(os.listdir(tmp_path))
    ids = {f.split(".")[0] for f in files}
    assert len(ids) == 1  # one module_NNNN per compile
    suffixes = {f.split(".", 2)[2] for f in files}
    assert {"as_parsed.txt", "before_optimizations.txt", "0001.optimization.after_fusion.txt",
            "after_optimizations.txt", "buffer-assignment.txt", "ir-no-opt.ll", "ir-with-opt.ll", "o"} <= suffixes
    assert not any("after_dce" in f for f in files)
    assert exe.num_devices == 8
