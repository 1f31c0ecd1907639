#!/usr/bin/env python3
"""Differential SPMD conformance over the shared corpus's partitioner and propagation test modules (stdlib only).

For every module of <corpus>/hlo/spmd_sharding, over the number of devices its test used (`num_devices` in the
manifest, or else the largest tile assignment among its shardings), at most --max-devices:
  1. run it partitioned over `num_devices` emulated cores (sharding-propagation + spmd-partitioner, each core on its
     shard, JIT) and compare the assembled outputs with the reference interpreter running the unpartitioned module
     on one device (`--check-against=interpreter`);
  2. if that fails, run the unpartitioned module alone on the interpreter (`--no-partition --num-partitions=1`): a
     module that cannot run that way (collectives among devices that do not exist, unsupported custom calls) is
     `not-runnable` and leaves the denominator.
Outcomes: pass (every output matches), mismatch (some output differs), unsharded (no sharding to partition: counted
as a pass, nothing was partitioned), error (the partitioner or the partitioned run failed with a diagnostic),
crash (signal, other exit code or timeout; always fatal).

Floating-point outputs may differ by reassociation where a reduction or a dot's contraction is split across cores,
and by the default numerics mode's approximations: xla-run judges them by the default mode's relative rule
(docs/numerics.md, "The relative rule": each output's error against an f64 reference within 8x the interpreter's own
plus 2 eps), the one rule every default-mode comparison uses. --max-ulp N / --atol X pass an explicit per-element
tolerance to xla-run instead (the fixed rule this sweep used before: 16 ULP or 1e-3 relative to max(1, |reference|)). Modules with host I/O or rng (per-device data), or with arrays of more than 8M elements (too slow for the reference
interpreter), are not comparable; modules codegen cannot compile are
`jit-unsupported`; both leave the denominator.
--prefuse XLA_OPT runs every module through `XLA_OPT --passes=sharding-propagation,fusion` first (the fusion pass
fuses ops of equal shardings), so that the partitioner partitions fusion instructions; a fusion computed whole on
every core counts as an error.
Gate: pass (incl. unsharded) >= --gate of runnable modules (default 0.9), and no crash. `--report FILE` writes the
Markdown table (docs/spmd_conformance.md is generated that way). Exit: 0 gate holds, 1 not, 77 corpus absent.
"""

import argparse
import collections
import concurrent.futures
import csv
import os
import re
import subprocess
import sys
import tempfile
import time

OUTCOMES = ["pass", "unsharded", "mismatch", "error", "crash", "jit-unsupported", "not-runnable"]
# Host I/O has per-device data: a partitioned infeed/outfeed run is not comparable with one device's.
HOST_IO = re.compile(r"\b(infeed|outfeed|send|recv|rng|rng-bit-generator)\(")


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, errors="replace")
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timeout"


SHAPE = re.compile(r"\b(?:pred|[sfu]\d+|bf16|c64|c128|f8e\w+)\[([0-9,]+)\]")
# The reference interpreter is the oracle; arrays beyond this many elements make it too slow for a test run.
MAX_ELEMENTS = 1 << 23


TILE = re.compile(r"devices=\[([0-9,]+)\]")


def devices_from_shardings(text):
    """The device count a module's tiled shardings agree on (every tile assignment names devices 0..N-1), else 0."""
    counts = set()
    for m in TILE.finditer(text):
        p = 1
        for d in m.group(1).split(","):
            p *= int(d)
        counts.add(p)
    if len(counts) != 1:
        return 0
    n = counts.pop()
    # Explicit device lists must stay below N (tests of propagation alone may name devices of a larger mesh).
    for m in re.finditer(r"devices=\[[0-9,]+\]([0-9][0-9,]*)", text):
        if max(int(x) for x in m.group(1).split(",") if x) >= n:
            return 0
    return n


def largest_array(text):
    largest = 0
    for m in SHAPE.finditer(text):
        n = 1
        for d in m.group(1).split(","):
            n *= int(d)
        largest = max(largest, n)
    return largest


def fuse(xla_opt, path, tmpdir, timeout):
    """The module after propagation and fusion (--prefuse), written to tmpdir: (path, None) or (None, why)."""
    code, out, err = run([xla_opt, path, "--passes=sharding-propagation,fusion"], timeout)
    if code != 0:
        return None, (err.strip().splitlines() or [f"xla-opt --passes=fusion exit {code}"])[0][:200]
    fused = os.path.join(tmpdir, os.path.basename(path) + ".fused.hlo")
    with open(fused, "w") as f:
        f.write(out)
    return fused, None


def classify(xla_run, path, devices, backend, max_ulp, atol, timeout, prefuse=None):
    with open(path, errors="replace") as f:
        text = f.read()
    if prefuse is not None:
        xla_opt, tmpdir = prefuse
        fused, why = fuse(xla_opt, path, tmpdir, timeout)
        if fused is None:
            return ("crash" if why.startswith("xla-opt --passes=fusion exit") else "error"), why
        outcome, why = classify(xla_run, fused, devices, backend, max_ulp, atol, timeout)
        if outcome == "pass":
            with open(fused, errors="replace") as f:
                if " fusion(" in f.read():
                    outcome, why = "pass", "fused"
        return outcome, why
    if HOST_IO.search(text):
        return "not-runnable", "host I/O or rng: per-device data"
    if largest_array(text) > MAX_ELEMENTS:
        return "not-runnable", f"an array of more than {MAX_ELEMENTS} elements: too large for the reference interpreter"
    tolerance = ([f"--max-ulp={max_ulp}"] if max_ulp is not None else []) + \
        ([f"--atol={atol}"] if atol is not None else [])
    code, out, err = run([xla_run, path, f"--backend={backend}", f"--num-partitions={devices}", "--num-replicas=1",
                          "--no-print", "--spmd-report", "--check-against=interpreter"] + tolerance, timeout)
    if code != 0:
        # Only a module that runs unpartitioned on one device can be compared: check that before blaming the
        # partitioner (cheap, and only for the few that fail).
        ref_code, _, ref_err = run([xla_run, path, "--backend=interpreter", "--no-partition", "--num-partitions=1",
                                    "--num-replicas=1", "--no-print"], timeout)
        if ref_code != 0:
            return "not-runnable", (ref_err.strip().splitlines() or ["crash"])[0][:200]
    if code is None:
        return "crash", "timeout"
    whole = next((l for l in err.splitlines() if "fusion is computed on the whole array" in l), None)
    if code == 0 and whole:
        return "error", whole[:200]
    if code not in (0, 1):
        return "crash", f"exit {code}: " + (err.strip().splitlines() or [""])[-1][:200]
    partitioned = out.startswith("spmd:")
    # Modules with manual regions are checked against the interpreter running the partitioned program on every device
    # (xla-run names that reference: "check against the interpreter running the partitioned program on N devices
    # (...): ..."), the others against the unpartitioned module.
    m = re.search(r"check against the interpreter[^:\n]*: (\d+) of (\d+) outputs? match", out)
    if code == 0 and m:
        return ("pass" if partitioned else "unsharded"), ""
    if m:
        return "mismatch", f"{m.group(1)} of {m.group(2)} outputs match"
    if "(use --backend=interpreter)" in err:
        return "jit-unsupported", (err.strip().splitlines() or [""])[0][-160:]
    errors = [l for l in err.splitlines() if " error: " in l] or err.strip().splitlines() or [""]
    return "error", errors[0][:200]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--xla-run", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--backend", default="jit", choices=["jit"])
    ap.add_argument("--max-devices", type=int, default=64)
    # Unset: the relative rule (see above).
    ap.add_argument("--max-ulp", type=int)
    ap.add_argument("--atol", type=float)
    ap.add_argument("--gate", type=float, default=0.9)
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report")
    ap.add_argument("--filter", default="", help="only files whose path contains this")
    ap.add_argument("--prefuse", metavar="XLA_OPT",
                    help="run each module through `XLA_OPT --passes=sharding-propagation,fusion` first: the "
                         "partitioner then partitions fusion instructions (one computed whole is an error)")
    args = ap.parse_args()

    manifest = os.path.join(args.corpus, "hlo", "manifest.tsv")
    if not os.path.exists(manifest):
        print(f"corpus not found at {args.corpus}: skipped")
        return 77
    cases = []
    with open(manifest, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["tier"] != "spmd_sharding" or row["format"] != "hlo_module" or row["expect"] != "ok":
                continue
            if "templated" in row["flags"].split(","):
                continue
            if row["num_devices"]:
                devices = int(row["num_devices"])
            else:
                # Propagation tests name no device count: take the one their shardings imply.
                with open(os.path.join(args.corpus, row["file"]), errors="replace") as f:
                    devices = devices_from_shardings(f.read())
            if devices < 2 or devices > args.max_devices or args.filter not in row["file"]:
                continue
            cases.append((row["file"], devices))
    cases.sort()

    start = time.time()
    results = {}
    with tempfile.TemporaryDirectory(prefix="spmd_corpus_") as tmpdir, \
            concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        prefuse = (args.prefuse, tmpdir) if args.prefuse else None
        futures = {pool.submit(classify, args.xla_run, os.path.join(args.corpus, f), d, args.backend, args.max_ulp,
                               args.atol, args.timeout, prefuse): (f, d) for f, d in cases}
        for fut in concurrent.futures.as_completed(futures):
            results[futures[fut]] = fut.result()
    fused = sum(1 for outcome, why in results.values() if outcome == "pass" and why == "fused")

    by_dir = collections.defaultdict(collections.Counter)
    for (f, _), (outcome, _) in results.items():
        by_dir[f.split("/")[2]][outcome] += 1
    total = collections.Counter(outcome for outcome, _ in results.values())
    runnable = sum(total[o] for o in OUTCOMES if o not in ("not-runnable", "jit-unsupported"))
    passed = total["pass"] + total["unsharded"]
    rate = passed / runnable if runnable else 1.0

    lines = ["# SPMD conformance (generated by test/corpus/run_spmd_corpus.py; do not edit)", "",
             f"Modules of `hlo/spmd_sharding` with at most {args.max_devices} devices, partitioned over their "
             f"`num_devices` (or, for propagation tests, the device count their shardings agree on) emulated cores "
             f"({args.backend} backend) and compared with the unpartitioned module on "
             "the reference interpreter (" +
             (f"floats within {args.max_ulp or 0} ULP or {args.atol or 0} relative, for reductions that partitioning "
              "reassociates" if args.max_ulp is not None or args.atol is not None else
              "floats by the default mode's relative rule of docs/numerics.md: each output's error against an f64 "
              "reference within 8x the interpreter's own, reassociated reductions included") +
             "). `jit-unsupported` and `not-runnable` modules leave the denominator.",
             "",
             "| test suite | " + " | ".join(OUTCOMES) + " |", "|---|" + "---|" * len(OUTCOMES)]
    for d in sorted(by_dir):
        lines.append(f"| {d} | " + " | ".join(str(by_dir[d][o]) for o in OUTCOMES) + " |")
    lines.append("| **total** | " + " | ".join(f"**{total[o]}**" for o in OUTCOMES) + " |")
    lines += ["", f"Pass rate over runnable modules: {passed}/{runnable} = {rate:.1%} (gate {args.gate:.0%}).", ""]
    if args.prefuse:
        lines += [f"Every module went through the fusion pass first (--prefuse); {fused} of the passing modules had "
                  "fusions for the partitioner to partition.", ""]
    def reason(why):
        # The diagnostic's message without the file name and location (stable across machines).
        why = why.split(" error: ", 1)[-1] if " error: " in why else why
        return "too large for the reference interpreter" if "too large" in why else why.split(" (")[0][:100]

    reasons = collections.Counter(reason(why) for o, why in results.values() if o == "not-runnable")
    if reasons:
        lines += ["Why modules were not runnable:", ""]
        for why, count in reasons.most_common():
            lines.append(f"- {count}: {why.replace('|', '/')[:140]}")
        lines.append("")
    problems = [(f, d, o, why) for (f, d), (o, why) in sorted(results.items()) if o in ("mismatch", "error", "crash")]
    if problems:
        lines += ["## Not passing", "", "| file | devices | outcome | detail |", "|---|---|---|---|"]
        for f, d, o, why in problems:
            detail = why.split(" error: ", 1)[-1] if " error: " in why else why
            lines.append(f"| `{os.path.basename(f)}` | {d} | {o} | {detail.replace('|', '/')} |")
    report = "\n".join(lines) + "\n"
    if args.report:
        with open(args.report, "w") as f:
            f.write(report)
    for f, d, o, why in problems:
        print(f"{o}: {f} ({d} devices): {why}")
    print(f"spmd corpus: {len(cases)} modules in {time.time() - start:.0f}s; " +
          ", ".join(f"{o} {total[o]}" for o in OUTCOMES))
    print(f"pass rate {passed}/{runnable} = {rate:.1%} (gate {args.gate:.0%})" +
          (f"; {fused} passing modules had fusions" if args.prefuse else ""))
    ok = total["crash"] == 0 and rate >= args.gate
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
