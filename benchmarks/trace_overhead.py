#!/usr/bin/env python3
"""What observability costs a run (docs/observability.md#overhead): xla-run's run time (--mpi-report: the program's
run, compilation excluded) plain, with --metrics (counters and phase timing only) and with --trace (kernels compiled
with trace hooks, every kernel and collective recorded), interleaved, median of --repeat runs each.

Usage: benchmarks/trace_overhead.py [--xla-run build/bin/xla-run] [--repeat 7] [MODULE ...]
(default MODULEs: lnchain_8x128x768 and bert_encoder_layer from ../shared/peers/hlo next to the repository).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "..", "shared", "peers", "hlo")


def run_ms(xla_run, module, extra):
    out = subprocess.run([xla_run, module, "--no-print", "--mpi-report", *extra], check=True, capture_output=True,
                         text=True).stdout
    return float(re.search(r"mpi: process 0: run ([0-9.]+) ms", out).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--xla-run", default=os.path.join(ROOT, "build", "bin", "xla-run"))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("modules", nargs="*")
    args = parser.parse_args()
    modules = args.modules or [os.path.join(PEERS, m + ".hlo") for m in ("lnchain_8x128x768", "bert_encoder_layer")]
    with tempfile.TemporaryDirectory() as tmp:
        modes = {"plain": [], "metrics": ["--metrics"], "trace": ["--trace=" + os.path.join(tmp, "t.json")]}
        print(f"{'module':32} {'plain ms':>10} {'metrics ms':>11} {'trace ms':>10} {'trace/plain':>12}")
        for module in modules:
            if not os.path.exists(module):
                sys.exit(f"no module {module}")
            times = {mode: [] for mode in modes}
            for _ in range(args.repeat):
                for mode, extra in modes.items():  # interleaved, so drift hits every mode alike
                    times[mode].append(run_ms(args.xla_run, module, extra))
            med = {mode: statistics.median(t) for mode, t in times.items()}
            print(f"{os.path.basename(module):32} {med['plain']:10.2f} {med['metrics']:11.2f} {med['trace']:10.2f} "
                  f"{med['trace'] / med['plain']:12.3f}")


if __name__ == "__main__":
    main()
