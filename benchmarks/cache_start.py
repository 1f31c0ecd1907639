#!/usr/bin/env python3
"""First vs second start of xla-run with the persistent compilation cache (docs/cache.md).

Runs `xla-run MODULE --no-print --mpi-report --explain-cache` repeatedly:
  cold: a fresh, empty cache directory each time (compile, then store the entry)
  warm: the cache the cold runs filled (a hit: the stored object is loaded)
and reports medians of
  wall   process start to exit, measured here
  run    the program's run (xla-run's --mpi-report; compilation excluded)
  start  wall - run: everything before the results, i.e. process start, parsing, input generation and compiling
         or loading the code
  ready  JitExecutable::Compile alone, from the cache log ("executable ready in")
and, as the floor no cache can go below, the median wall time of `xla-run --help` (loading the binary and its
shared libraries, and exiting).
With --npy-inputs the parameters come from .npy files (written once from the module's entry_computation_layout)
instead of xla-run's seeded generation, as when a caller supplies its arrays.
Usage: benchmarks/cache_start.py [--xla-run build/bin/xla-run] [--repeat 7] [--npy-inputs] [MODULE]
(default MODULE: ../shared/peers/hlo/bert_encoder_layer.hlo next to the repository).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_once(xla_run, module, cache_dir, extra):
    cmd = [xla_run, module, "--no-print", "--mpi-report", "--explain-cache", f"--cache-dir={cache_dir}", *extra]
    begin = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = (time.perf_counter() - begin) * 1e3
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    run = float(re.search(r"run ([0-9.]+) ms", proc.stdout).group(1))
    ready = float(re.search(r"executable ready in ([0-9.]+) ms", proc.stderr).group(1))
    hit = "cache: hit" in proc.stderr
    return {"wall": wall, "run": run, "start": wall - run, "ready": ready, "hit": hit}


def write_inputs(module, work):
    """Writes one .npy per entry parameter of the module's entry_computation_layout; returns the --input flags."""
    import numpy as np

    with open(module) as f:
        header = f.readline()
    layout = re.search(r"entry_computation_layout=\{\((.*?)\)->", header)
    if layout is None:
        sys.exit("--npy-inputs needs an entry_computation_layout in the module's first line")
    dtypes = {"f32": np.float32, "f64": np.float64, "s32": np.int32, "s64": np.int64}
    rng = np.random.default_rng(0)
    flags = []
    for i, (ty, dims) in enumerate(re.findall(r"(\w+)\[([\d,]*)\]", layout.group(1))):
        if ty not in dtypes:
            sys.exit(f"--npy-inputs: parameter {i} has type {ty}")
        shape = tuple(int(d) for d in dims.split(",") if d)
        path = os.path.join(work, f"p{i}.npy")
        np.save(path, rng.standard_normal(shape).astype(dtypes[ty]))
        flags.append(f"--input={path}")
    return flags


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("module", nargs="?",
                        default=os.path.join(ROOT, "..", "shared", "peers", "hlo", "bert_encoder_layer.hlo"))
    parser.add_argument("--xla-run", default=os.path.join(ROOT, "build", "bin", "xla-run"))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--npy-inputs", action="store_true", help="pass the parameters as .npy files")
    parser.add_argument("extra", nargs="*", help="more xla-run flags (after --)")
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    work = tempfile.mkdtemp(prefix="xlac_cache_bench_")
    try:
        if args.npy_inputs:
            args.extra += write_inputs(args.module, work)
        shared = os.path.join(work, "shared")
        cold, warm = [], []
        run_once(args.xla_run, args.module, shared, args.extra)  # fills the cache
        # Cold and warm runs alternate, so a change in the machine's load affects both alike.
        for i in range(args.repeat):
            fresh = os.path.join(work, f"cold{i}")
            cold.append(run_once(args.xla_run, args.module, fresh, args.extra))
            shutil.rmtree(fresh)
            warm.append(run_once(args.xla_run, args.module, shared, args.extra))
        floor = []
        for _ in range(args.repeat):
            begin = time.perf_counter()
            subprocess.run([args.xla_run, "--help"], capture_output=True, check=True)
            floor.append((time.perf_counter() - begin) * 1e3)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if any(r["hit"] for r in cold) or not all(r["hit"] for r in warm):
        sys.exit("unexpected cache behaviour: cold runs must miss and warm runs hit")

    def median(rows, key):
        return statistics.median(r[key] for r in rows)

    print(f"module: {os.path.relpath(args.module)}, {args.repeat} runs each, medians in ms; 1-minute load average "
          f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} CPUs")
    print(f"{'':6} {'wall':>9} {'run':>9} {'start':>9} {'ready':>9}")
    for name, rows in (("cold", cold), ("warm", warm)):
        print(f"{name:6} " + " ".join(f"{median(rows, k):9.1f}" for k in ("wall", "run", "start", "ready")))
    for key in ("start", "ready", "wall"):
        print(f"{key} ratio cold/warm: {median(cold, key) / median(warm, key):.1f}x")
    process = statistics.median(floor)
    print(f"process start and exit alone (xla-run --help): {process:.1f} ms; the best possible start ratio: "
          f"{median(cold, 'start') / process:.1f}x")


if __name__ == "__main__":
    main()
