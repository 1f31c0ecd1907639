#!/usr/bin/env python3
"""Differential test of the simplification passes over the HLO corpus (Python standard library only).

For every runnable module of <corpus>/hlo/manifest.tsv that is small (a size rule on the manifest's instruction
count and file size, never on file names), runs

    xla-opt FILE --passes=algebraic-simplifier,constant-folding,dce     (the output must parse back)
    xla-run --backend=interpreter --seed=S --output-dir=...   on the original and on the simplified module

and requires every result to be bitwise identical (the .npy files are compared byte for byte: NaN payloads, -0 and
all). Modules the interpreter cannot run as written (unsupported ops, expected errors, too slow for the per-run time
limit) are skipped and counted; a simplified module that fails where the original ran is a failure.
Exit status: 0 pass, 1 fail, 77 corpus absent (ctest SKIP_RETURN_CODE).
"""

import argparse
import concurrent.futures
import csv
import os
import re
import subprocess
import sys
import tempfile
import time

PASSES = "algebraic-simplifier,constant-folding,dce"


_SHAPE_RE = re.compile(r"\b(?:pred|[suf]\d+|bf16|f8\w*|c64|c128)\[([\d,]*)\]")


def largest_array(path):
    """Element count of the largest array shape written in the module (what bounds the interpreter's work)."""
    with open(path, errors="replace") as f:
        text = f.read()
    largest = 0
    for dims in _SHAPE_RE.findall(text):
        count = 1
        for d in filter(None, dims.split(",")):
            count *= int(d)
        largest = max(largest, count)
    return largest


def select(corpus, max_instr, max_bytes, max_elements):
    rows = []
    with open(os.path.join(corpus, "hlo", "manifest.tsv"), newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            flags = row["flags"].split(",")
            if row["format"] != "hlo_module" or row["expect"] != "ok" or "templated" in flags:
                continue
            if row["role"] == "nonroundtrip_output":
                continue
            n_instr = int(row["n_instr"] or 0)
            size = int(row["bytes"] or 0)
            if n_instr == 0 or n_instr > max_instr or size > max_bytes:
                continue
            if largest_array(os.path.join(corpus, row["file"])) > max_elements:
                continue
            rows.append(row["file"])
    return sorted(rows)


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, p.stdout, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, b"", "timeout"


def outputs(directory):
    result = {}
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                result[os.path.relpath(path, directory)] = f.read()
    return result


def check_one(args, rel):
    """Returns (status, detail): status in pass / skip / fail / unchanged."""
    start = time.monotonic()
    status, detail = check_one_timed(args, rel)
    if args.verbose and time.monotonic() - start > 2:
        print("SLOW %.1fs %s" % (time.monotonic() - start, rel), flush=True)
    return status, detail


def check_one_timed(args, rel):
    path = os.path.join(args.corpus, rel)  # manifest paths start with hlo/
    with tempfile.TemporaryDirectory() as tmp:
        code, simplified, err = run([args.xla_opt, path, "--passes=" + PASSES], args.timeout)
        if code is None:
            return "fail", "xla-opt timed out"
        if code != 0:
            # The passes run on verified modules only; a module xla-opt rejects before any pass ran is not ours.
            plain_code, _, _ = run([args.xla_opt, path], args.timeout)
            return ("skip", "does not verify") if plain_code != 0 else ("fail", "xla-opt: " + err.strip()[:300])
        # Unchanged modules need no run: compare with the plain print (same printer, same names).
        _, plain, _ = run([args.xla_opt, path], args.timeout)
        if plain == simplified:
            return "unchanged", ""
        simplified_path = os.path.join(tmp, "simplified.hlo")
        with open(simplified_path, "wb") as f:
            f.write(simplified)
        out_o, out_s = os.path.join(tmp, "orig"), os.path.join(tmp, "simp")
        flags = ["--backend=interpreter", "--seed=%d" % args.seed, "--no-print"]
        start = time.monotonic()
        code_o, _, _ = run([args.xla_run, path, "--output-dir=" + out_o] + flags, args.timeout)
        if code_o != 0:
            return "skip", "the original does not run on the interpreter (or not within the time limit)"
        # Generous, so that a loaded machine cannot turn a pass into a failure.
        limit = max(4 * (time.monotonic() - start), args.timeout)
        code_s, _, err_s = run([args.xla_run, simplified_path, "--output-dir=" + out_s] + flags, limit)
        if code_s != 0:
            return "fail", "simplified module fails: " + err_s.strip()[:300]
        got_o, got_s = outputs(out_o), outputs(out_s)
        if got_o != got_s:
            differing = sorted(k for k in set(got_o) | set(got_s) if got_o.get(k) != got_s.get(k))
            return "fail", "results differ: " + ", ".join(differing[:4])
        return "pass", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--xla-opt", required=True)
    parser.add_argument("--xla-run", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--max-instr", type=int, default=40, help="largest module (instructions) to run")
    parser.add_argument("--max-bytes", type=int, default=3000, help="largest module file (bytes) to run")
    parser.add_argument("--max-elements", type=int, default=4096, help="largest array (elements) in a module to run")
    parser.add_argument("--timeout", type=float, default=5, help="seconds per tool run (the original module's "
                        "interpreter run: a module that takes longer is skipped)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    if not os.path.exists(os.path.join(args.corpus, "hlo", "manifest.tsv")):
        print("corpus not found at %s: skipped" % args.corpus)
        return 77
    files = select(args.corpus, args.max_instr, args.max_bytes, args.max_elements)
    tally = {"pass": 0, "skip": 0, "fail": 0, "unchanged": 0}
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(check_one, args, rel): rel for rel in files}
        for future in concurrent.futures.as_completed(futures):
            rel = futures[future]
            status, detail = future.result()
            tally[status] += 1
            if status == "fail":
                failures.append((rel, detail))
            if args.verbose and status not in ("pass", "unchanged"):
                print("%s %s: %s" % (status.upper(), rel, detail))
    for rel, detail in sorted(failures):
        print("FAIL %s: %s" % (rel, detail))
    print("simplifier corpus: %d modules selected (<= %d instructions, <= %d bytes, arrays <= %d elements): %d "
          "unchanged by the passes, %d changed and bitwise equal on the interpreter, %d skipped (the original does "
          "not verify or run), %d failed"
          % (len(files), args.max_instr, args.max_bytes, args.max_elements, tally["unchanged"], tally["pass"],
             tally["skip"], tally["fail"]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
