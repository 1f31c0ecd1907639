#!/usr/bin/env python3
"""StableHLO conformance runner for xla-run (Python standard library only).

Runs `xla-run FILE` over the StableHLO cases of the shared corpus (<corpus>/README.md explains them) and classifies
each file by xla-run's contract:
  pass         exit 0: the module ran and every check.* custom-call held;
  fail         exit 1 after a check report (`... error: check.X failed ...`): wrong numbers;
  unsupported  exit 1 with a diagnostic naming something xlac does not support (an op, a type, a custom call);
  error        any other exit 1 (a parse, verification or run-time error);
  crash        anything else (a signal, another exit code) or a timeout; always fatal.

Categories and their gates (fractions of the category's files):
  testdata     JAX-generated cases that are neither dynamic nor quantized   >= 98% pass
  interpret    the StableHLO reference interpreter's own cases               >= 95% pass
  math         accuracy cases with ULP bounds                                 100% pass
  dynamic, quantized (testdata subsets)                                       reported only
Prints a per-op-family and a per-op table; `--report FILE` writes them as Markdown (docs/conformance.md is generated
this way, never edited by hand). Exit status: 0 all gates hold, 1 a gate fails or something crashed, 77 corpus absent.

`--backend=jit` makes the run differential instead: every file runs on the JIT (`xla-run --backend=jit`) and on the
interpreter, and the outcome of the JIT is classified as above except that a module codegen cannot compile (xla-run's
`(use --backend=interpreter)` error) is `unsupported`. The gate: in testdata, interpret and math every file that
passes on the interpreter must compile and pass compiled; in the other categories every file that passes on the
interpreter and compiles must pass compiled; a JIT crash is fatal everywhere. The report
(per category: interpreter passes, files that compile, compiled passes) goes to `--report`, never to
docs/conformance.md, which stays the interpreter's.
"""

import argparse
import collections
import concurrent.futures
import csv
import os
import re
import subprocess
import sys
import time

GATES = {"testdata": 0.98, "interpret": 0.95, "math": 1.0}
CATEGORY_DIRS = [
    ("testdata", "testdata"),
    ("interpret", "interpret/cases"),
    ("math", "math"),
    ("dynamic", "testdata/dynamic"),
    ("quantized", "testdata/quantized"),
]
OUTCOMES = ["pass", "fail", "unsupported", "error", "crash"]

# Families in the order that decides a file's primary family: the most specific family it exercises.
FAMILY_PRIORITY = [
    "quantization", "dynamic_shape", "collective", "fft", "linalg", "rng", "sort", "convolution", "dot",
    "reduce_window", "gather_scatter", "reduce", "control_flow", "chlo", "convert", "slice_concat_pad", "shape",
    "compare_select", "elementwise_unary", "elementwise_binary", "tuple", "constant_iota",
]

_DTYPE_TOKEN = re.compile(r"^(?:float|bfloat|int|uint|bool|complex|f8e|i\d|ui\d|f\d|bf16|pred|shape|dtypes)")


def op_of(category, name):
    """The op a case is about, from its file name: `abs__001` -> abs, `pow_complex64_20_30_...` -> pow."""
    stem = name[:-len(".mlir")]
    if category == "interpret":
        return stem.split("__")[0]
    parts = stem.split("_")
    kept = []
    for part in parts:
        if _DTYPE_TOKEN.match(part) or part.isdigit():
            break
        kept.append(part)
    return "_".join(kept) or stem


def read_families(corpus):
    families = {}
    path = os.path.join(corpus, "stablehlo", "manifest.tsv")
    if not os.path.exists(path):
        return families
    with open(path, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            fams = [x for x in row.get("families", "").split(",") if x]
            primary = next((p for p in FAMILY_PRIORITY if p in fams), fams[0] if fams else "other")
            families[row["file"]] = primary
    return families


def classify(returncode, output):
    if returncode == 0:
        return "pass"
    if returncode != 1:
        return "crash"
    if re.search(r"error: check\.\S+ failed", output):
        return "fail"
    if "(use --backend=interpreter)" in output:
        return "unsupported"
    if re.search(r"unsupported|not supported", output):
        return "unsupported"
    return "error"


def first_error_line(output):
    for line in output.splitlines():
        if "error:" in line:
            return line.strip()[:300]
    lines = [l for l in output.splitlines() if l.strip()]
    return lines[-1][:300] if lines else ""


def run_one(xla_run, corpus, rel, timeout, backend="interpreter"):
    """Runs one case from the corpus root, so diagnostics name `stablehlo/...` paths on every machine."""
    start = time.monotonic()
    try:
        proc = subprocess.run([xla_run, rel, "--seed=1", "--no-print", f"--backend={backend}"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout, cwd=corpus)
        output = proc.stdout.decode("utf-8", "replace")
        outcome = classify(proc.returncode, output)
        if outcome == "crash":
            output = f"exit code {proc.returncode}\n" + output
    except subprocess.TimeoutExpired:
        outcome, output = "crash", f"timed out after {timeout} s"
    return outcome, first_error_line(output) if outcome != "pass" else "", time.monotonic() - start


def collect(corpus, only):
    root = os.path.join(corpus, "stablehlo")
    cases = []
    for category, sub in CATEGORY_DIRS:
        if only and category not in only:
            continue
        d = os.path.join(root, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith(".mlir") and os.path.isfile(os.path.join(d, name)):
                cases.append((category, name, os.path.join(d, name), f"stablehlo/{sub}/{name}"))
    return cases


def _cell(text):
    return text.replace("|", "\\|")


def markdown(results, families, gates_ok):
    by_cat = collections.OrderedDict((c, collections.Counter()) for c, _ in CATEGORY_DIRS)
    by_family = collections.defaultdict(collections.Counter)
    by_op = collections.defaultdict(collections.Counter)
    for (category, name, rel), (outcome, _, _) in results.items():
        by_cat[category][outcome] += 1
        if category in GATES:
            by_family[families.get(rel, "other")][outcome] += 1
            by_op[(category, op_of(category, name))][outcome] += 1

    def row(label, counter):
        total = sum(counter.values())
        rate = f"{100.0 * counter['pass'] / total:.1f}%" if total else "-"
        return f"| {label} | {total} | " + " | ".join(str(counter[o]) for o in OUTCOMES) + f" | {rate} |"

    head = "| {} | files | " + " | ".join(OUTCOMES) + " | pass rate |\n|---|---:|" + "---:|" * (len(OUTCOMES) + 1)
    out = ["# StableHLO conformance", "",
           "Generated by `test/corpus/run_stablehlo_conformance.py --report docs/conformance.md` from the shared",
           "corpus (`../shared/corpus/stablehlo`, see its README for the check semantics); do not edit by hand.",
           "Each file runs through `xla-run FILE` on the reference interpreter: *pass* = every `check.*` held,",
           "*fail* = a check reported wrong numbers, *unsupported* = a clear diagnostic for something xlac does not",
           "support, *error* = any other clean error, *crash* = abnormal exit (never acceptable).", "",
           "## Summary", "", head.format("category"), ]
    for category, counter in by_cat.items():
        if sum(counter.values()):
            gate = f" (gate {GATES[category] * 100:.0f}%)" if category in GATES else " (reported only)"
            out.append(row(category + gate, counter))
    out += ["", f"All gates hold: **{'yes' if gates_ok else 'NO'}**.", "",
            "## By op family (testdata, interpret and math)", "",
            "A file counts under its most specific family (manifest `families` column).", "",
            head.format("family")]
    for family in sorted(by_family):
        out.append(row(family, by_family[family]))
    out += ["", "## Files that do not pass", "", "| file | outcome | first diagnostic |", "|---|---|---|"]
    for (category, name, rel), (outcome, message, _) in sorted(results.items(), key=lambda kv: kv[0][2]):
        if outcome != "pass" and category in GATES:
            out.append(f"| `{rel}` | {outcome} | {_cell(message)} |")
    out += ["", "## By op (testdata, interpret and math)", "", head.format("category / op")]
    for (category, op) in sorted(by_op):
        out.append(row(f"{category} / {op}", by_op[(category, op)]))
    out += ["", "## Dynamic and quantized subsets (not gated)", "", "| file | outcome | first diagnostic |",
            "|---|---|---|"]
    for (category, name, rel), (outcome, message, _) in sorted(results.items(), key=lambda kv: kv[0][2]):
        if category not in GATES and outcome != "pass":
            out.append(f"| `{rel}` | {outcome} | {_cell(message)} |")
    return "\n".join(out) + "\n"


JIT_VIOLATIONS = ("fail", "error", "crash")


def jit_markdown(pairs, gate_ok):
    out = ["# StableHLO conformance on the JIT", "",
           "Generated by `test/corpus/run_stablehlo_conformance.py --backend=jit --report docs/conformance_jit.md` (ctest `stablehlo_conformance_jit`).",
           "Every file runs on the JIT and on the reference interpreter. *compiles* = the JIT did not reject the",
           "module as unsupported. The gate: in testdata, interpret and math every file that passes on the interpreter",
           "passes compiled; elsewhere every file that passes on the interpreter and compiles passes compiled.",
           "",
           "| category | files | interpreter pass | compiles | JIT pass | JIT fail | JIT error | JIT crash "
           "| gate violations |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for category, _ in CATEGORY_DIRS:
        rows = [(i, j) for (cat, _, _), (i, j) in pairs.items() if cat == category]
        if not rows:
            continue
        c = jit_counts(category, rows)
        out.append(f"| {category} | {c['files']} | {c['interp_pass']} | {c['compiles']} | {c['pass']} | {c['fail']} | "
                   f"{c['error']} | {c['crash']} | {c['violations']} |")
    out += ["", f"Gate holds: **{'yes' if gate_ok else 'NO'}**.", "",
            "## Gate violations", "",
            "| file | JIT outcome | first diagnostic |", "|---|---|---|"]
    for (category, _, rel), (interp, jit) in sorted(pairs.items(), key=lambda kv: kv[0][2]):
        if is_violation(category, interp, jit):
            out.append(f"| `{rel}` | {jit[0]} | {_cell(jit[1])} |")
    out += ["", "## Why modules do not compile (first diagnostic, by count)", "", "| count | diagnostic |",
            "|---:|---|"]
    for message, n in unsupported_reasons(pairs).most_common():
        out.append(f"| {n} | {_cell(message)} |")
    return "\n".join(out) + "\n"


# Categories where the JIT must compile everything the interpreter passes (the compiled pass count equals the
# interpreter's).
JIT_COMPLETE = ("testdata", "interpret", "math")


def is_violation(category, interp, jit):
    if jit[0] == "crash":
        return True
    if interp[0] != "pass":
        return False
    return jit[0] != "pass" if category in JIT_COMPLETE else jit[0] in JIT_VIOLATIONS


def jit_counts(category, rows):
    c = collections.Counter(files=len(rows))
    for interp, jit in rows:
        c["interp_pass"] += interp[0] == "pass"
        c["compiles"] += jit[0] != "unsupported"
        c[jit[0]] += 1
        c["violations"] += is_violation(category, interp, jit)
    return c


def unsupported_reasons(pairs):
    reasons = collections.Counter()
    for (_, _, _), (_, jit) in pairs.items():
        if jit[0] == "unsupported":
            # "stablehlo/x.mlir: error: codegen does not support OP (name): why (use ...)" -> "OP: why"
            m = re.search(r"codegen does not support (\S+) \([^)]*\): (.*?)(?: \(use --backend=interpreter\))?$",
                          jit[1])
            reasons[f"{m.group(1)}: {m.group(2)}" if m else re.sub(r"^\S+: error: ", "", jit[1])] += 1
    return reasons


def main_jit(args, xla_run, corpus, cases):
    start = time.monotonic()
    pairs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {}
        for cat, name, path, rel in cases:
            for backend in ("interpreter", "jit"):
                futures[pool.submit(run_one, xla_run, corpus, rel, args.timeout, backend)] = ((cat, name, rel), backend)
        results = {}
        for future in concurrent.futures.as_completed(futures):
            results[futures[future]] = future.result()
    for cat, name, path, rel in cases:
        key = (cat, name, rel)
        pairs[key] = (results[(key, "interpreter")], results[(key, "jit")])
    elapsed = time.monotonic() - start

    violations = [(rel, jit) for (cat, _, rel), (interp, jit) in sorted(pairs.items(), key=lambda kv: kv[0][2])
                  if is_violation(cat, interp, jit)]
    print(f"{'category':10s} {'files':>5s} {'interp':>6s} {'compiles':>8s} {'jit pass':>8s}  (jit fail/error/crash)")
    for category, _ in CATEGORY_DIRS:
        rows = [(i, j) for (cat, _, _), (i, j) in pairs.items() if cat == category]
        if rows:
            c = jit_counts(category, rows)
            print(f"{category:10s} {c['files']:5d} {c['interp_pass']:6d} {c['compiles']:8d} {c['pass']:8d}  "
                  f"({c['fail']}/{c['error']}/{c['crash']})")
    for message, n in unsupported_reasons(pairs).most_common(15):
        print(f"  unsupported x{n}: {message}")
    for rel, jit in violations:
        print(f"VIOLATION {jit[0]:5s} {rel}: {jit[1]}")
    gate_ok = not violations
    print(f"gate (interpreter pass => JIT pass in {', '.join(JIT_COMPLETE)}; + compiles elsewhere): {'ok' if gate_ok else 'FAILED'}; wall time {elapsed:.1f} s")
    if args.report:
        with open(args.report, "w") as f:
            f.write(jit_markdown(pairs, gate_ok))
    return 0 if gate_ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--xla-run", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--report", help="write the Markdown tables here")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--only", action="append", help="restrict to a category (repeatable)")
    parser.add_argument("--backend", choices=["interpreter", "jit"], default="interpreter",
                        help="interpreter: gated pass rates; jit: differential run against the interpreter")
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.corpus, "stablehlo")):
        print(f"corpus not found at {args.corpus}: skipping")
        return 77
    xla_run, corpus = os.path.abspath(args.xla_run), os.path.abspath(args.corpus)
    families = read_families(corpus)
    cases = collect(corpus, args.only)
    if args.backend == "jit":
        return main_jit(args, xla_run, corpus, cases)
    start = time.monotonic()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_one, xla_run, corpus, rel, args.timeout): (cat, name, rel)
                   for cat, name, path, rel in cases}
        for future in concurrent.futures.as_completed(futures):
            results[futures[future]] = future.result()
    elapsed = time.monotonic() - start

    counts = collections.defaultdict(collections.Counter)
    for (category, _, _), (outcome, _, _) in results.items():
        counts[category][outcome] += 1
    gates_ok = True
    for category, _ in CATEGORY_DIRS:
        counter = counts.get(category)
        if not counter:
            continue
        total = sum(counter.values())
        rate = counter["pass"] / total
        line = f"{category:10s} {counter['pass']:5d}/{total:<5d} pass ({100 * rate:5.1f}%)  " + "  ".join(
            f"{o} {counter[o]}" for o in OUTCOMES[1:])
        if category in GATES:
            ok = rate >= GATES[category] - 1e-12
            gates_ok &= ok
            line += f"  gate {100 * GATES[category]:.0f}%: {'ok' if ok else 'FAILED'}"
        print(line)
    crashes = [(rel, msg) for (_, _, rel), (outcome, msg, _) in sorted(results.items()) if outcome == "crash"]
    for rel, msg in crashes:
        print(f"CRASH {rel}: {msg}")
    for (category, _, rel), (outcome, msg, _) in sorted(results.items(), key=lambda kv: kv[0][2]):
        if category in GATES and outcome != "pass":
            print(f"  {outcome:11s} {rel}: {msg}")
    slowest = sorted(((secs, rel) for (_, _, rel), (_, _, secs) in results.items()), reverse=True)[:3]
    print(f"wall time {elapsed:.1f} s; slowest: " + ", ".join(f"{rel} {secs:.1f} s" for secs, rel in slowest))
    if args.report:
        with open(args.report, "w") as f:
            f.write(markdown(results, families, gates_ok and not crashes))
    return 0 if gates_ok and not crashes else 1


if __name__ == "__main__":
    sys.exit(main())
