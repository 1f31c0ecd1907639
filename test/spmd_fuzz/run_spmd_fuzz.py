#!/usr/bin/env python3
"""Randomized differential test of the SPMD partitioner (stdlib only).

For every seed of --seeds A:B (B excluded): generate a random sharded module (gen_spmd_module.py), check that it
parses and verifies (`xla-opt FILE`; a module that does not is a generator bug and fails), then run

  xla-run FILE --num-partitions=N --check-against=interpreter --atol=1e-4 --max-ulp=16 --no-print --seed=S --exact

which partitions it over N emulated cores, runs each shard with the JIT and compares the assembled outputs with the
reference interpreter running the unpartitioned module on one device. --exact (codegen's bit-for-bit numerics) keeps
the comparison about partitioning: the default mode's approximate tanh/exp/... legitimately move values across the
ties and thresholds of select-and-scatter, argmax, sort and compare, with or without partitioning; the tolerance is
for the sums partitioning reassociates (exact mode promises bit-for-bit agreement per device, so the only difference
left is partitioning's and an explicit per-element bound suits it). --default-numerics runs codegen's default mode
instead, judged like every default-mode comparison by xla-run's relative rule (docs/numerics.md, "The relative
rule"; --atol and --max-ulp are then not passed). Outcomes:
  pass          exit 0: every output matches
  mismatch      exit 1 with "check against the interpreter: X of Y outputs match", X < Y
  error         exit 1 otherwise (the partitioner or the partitioned run reported an error)
  unsupported   exit 1 and the JIT asks for --backend=interpreter (the generator should not emit that construct)
  crash         any other exit status, a signal, or --timeout
  invalid       the generated module does not verify (a generator bug)
Every outcome but pass is a failure: the module goes to --failures DIR as seed_<S>.hlo with the command and the
first lines of stderr in a comment, and the seed, command and stderr are printed. Unless --no-minimize, the module
is then shrunk greedily while it still fails the same way (root moved to an earlier value, instructions bypassed,
shardings dropped) and written as seed_<S>.min.hlo.

--compiler turns this into the differential fuzzer of the compiler (docs/compiler_fuzzing.md): the same programs
unsharded on one device, with random layouts on some values (gen_spmd_module.generate(seed, compiler=True)), run as

  xla-run FILE --backend=jit --check-against=interpreter --no-print --seed=S --exact   (bit for bit)
  xla-run FILE --backend=jit --check-against=interpreter --no-print --seed=S           (default numerics)

(--modes chooses which; the default mode compares within the documented tolerance of docs/numerics.md). A failure's
outcome names the mode: mismatch(exact), error(default), ... A default-mode mismatch in a module with a
discontinuous op (a float compare or sort, select-and-scatter, a float-to-integer or f32-to-bf16 convert,
floor/ceil/round/sign) is "tolerated", not a failure: the approximations the bounds allow legitimately move values
across its thresholds (the exact run of the same module must still match bit for bit).

--prefuse runs every module through the fusion pass before partitioning it (issue 27: the partitioner partitions
fusion instructions): shardings other than the parameters' and roots' are dropped first (the fusion pass does not fuse
across differing shardings), `xla-opt --passes=fusion` fuses, and the fused module (FILE.fused.hlo) is partitioned,
its fused computations getting their shardings from sharding-propagation, and compared with the interpreter running
it unpartitioned. A fusion computed whole on every core is an error.

--time-limit SECONDS stops starting new seeds after that long (the seeds not run are reported, not failed).
Last line: "spmd fuzz: N passed, M failed" ("compiler fuzz: ..." with --compiler). Exit 1 if anything failed, else 0.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_spmd_module  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Ops whose output jumps when an input moves by an ulp (see --compiler above).
# Integer compares and sorts (loop counters, iota keys) are exact unless their input came through one of the others.
DISCONTINUOUS_RE = re.compile(r"compare\((f32|bf16)|select-and-scatter\(|sort\((f32|bf16)|bf16|"
                              r"(s32|pred)\[[\d,]*\](\{[\d,]*\})? convert\(|floor\(|ceil\(|round-nearest|sign\(")
MATCH_RE = re.compile(r"check against the interpreter: (\d+) of (\d+) outputs? match")


def run(cmd, timeout):
    # A tool that is missing or busy is being relinked (the build directory is shared): wait for it to come back.
    for attempt in range(60):
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, errors="replace")
            return p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            return None, "", "timeout after %ss" % timeout
        except OSError as e:  # FileNotFoundError, ETXTBSY, ...
            if attempt == 59:
                raise
            print("run_spmd_fuzz: cannot run %s (%s); retrying in 5 s" % (cmd[0], e.strerror), file=sys.stderr)
            time.sleep(5)


def xla_run_cmd(args, path, num_partitions, seed, mode=None):
    if args.compiler:
        return [args.xla_run, path, "--backend=jit", "--check-against=interpreter", "--no-print",
                "--seed=%d" % seed] + (["--exact"] if (mode or args.modes[0]) == "exact" else [])
    # Exact mode: partitioning's reassociated sums within --atol / --max-ulp. Default mode: xla-run's relative rule.
    tolerance = [] if args.default_numerics else ["--atol=%s" % args.atol, "--max-ulp=%d" % args.max_ulp, "--exact"]
    return [args.xla_run, path, "--num-partitions=%d" % num_partitions, "--check-against=interpreter",
            "--no-print", "--seed=%d" % seed] + tolerance


def normalize(msg):
    """An error message without the names, numbers and shapes that shrinking changes."""
    msg = re.sub(r"^.*?: (error|warning): ", "", msg)
    msg = re.sub(r"%[\w.\-]+", "%X", msg)
    msg = re.sub(r"\b\w+\[[\d,]*\](\{[\d,]*\})?", "T", msg)
    return re.sub(r"\d+", "N", msg)


def strip_inner_shardings(text):
    """The module without the shardings of instructions other than parameters and roots."""
    lines = []
    for line in text.split("\n"):
        at = line.find(", sharding=")
        if at < 0 or "parameter(" in line or line.lstrip().startswith("ROOT"):
            lines.append(line)
            continue
        end, depth = at + len(", sharding="), 0
        while end < len(line):
            depth += {"{": 1, "}": -1}.get(line[end], 0)
            end += 1
            if depth == 0:
                break
        lines.append(line[:at] + line[end:])
    return "\n".join(lines)


def prefuse(args, path):
    """Writes PATH.fused.hlo (see --prefuse); returns its path, or None and the error."""
    with open(path) as f:
        stripped = strip_inner_shardings(f.read())
    stripped_path = path + ".stripped.hlo"
    with open(stripped_path, "w") as f:
        f.write(stripped)
    code, out, err = run([args.xla_opt, stripped_path, "--passes=fusion"], args.timeout)
    if code != 0:
        return None, (err.strip().splitlines() or ["xla-opt --passes=fusion exit %s" % code])[0]
    fused_path = path + ".fused.hlo"
    with open(fused_path, "w") as f:
        f.write(out)
    return fused_path, ""


def classify(args, path, num_partitions, seed):
    """Returns (outcome, detail, stdout, stderr)."""
    code, out, err = run([args.xla_opt, path], args.timeout)
    if code != 0:
        return "invalid", (err.strip().splitlines() or ["xla-opt exit %s" % code])[0], out, err
    if args.prefuse:
        fused_path, why = prefuse(args, path)
        if fused_path is None:
            return "invalid", why, "", ""
        outcome, detail, out, err = classify_run(args, xla_run_cmd(args, fused_path, num_partitions, seed))
        whole = next((l for l in err.splitlines() if "fusion is computed on the whole array" in l), None)
        if outcome == "pass" and whole:
            return "error", whole, out, err
        return outcome, detail, out, err
    if not args.compiler:
        return classify_run(args, xla_run_cmd(args, path, num_partitions, seed))
    for mode in args.modes:
        outcome, detail, out, err = classify_run(args, xla_run_cmd(args, path, num_partitions, seed, mode))
        if outcome == "mismatch" and mode == "default":
            with open(path) as f:
                if DISCONTINUOUS_RE.search(f.read()):
                    return "tolerated(default)", detail, out, err
        if outcome != "pass":
            return "%s(%s)" % (outcome, mode), detail, out, err
    return "pass", "", out, err


def classify_run(args, cmd):
    code, out, err = run(cmd, args.timeout)
    if code == 0:
        return "pass", "", out, err
    if code is None or code != 1:
        last = (err.strip().splitlines() or [""])[-1]
        return "crash", ("timeout" if code is None else "exit %s: %s" % (code, last)), out, err
    m = MATCH_RE.search(out)
    if m and int(m.group(1)) < int(m.group(2)):
        return "mismatch", "%s of %s outputs match" % (m.group(1), m.group(2)), out, err
    if "(use --backend=interpreter)" in err:
        return "unsupported", (err.strip().splitlines() or [""])[0], out, err
    lines = err.strip().splitlines()
    first = next((l for l in lines if "error" in l), next((l for l in lines if "warning:" not in l), ""))
    return "error", first, out, err


def signature(outcome, detail):
    return (outcome, normalize(detail) if outcome.split("(")[0] in ("error", "unsupported", "invalid") else "")


def minimize(args, prog, seed, want, tmpdir, budget_end):
    """Greedy shrinking of prog while it fails with the same signature. Returns (program, trials)."""
    path = os.path.join(tmpdir, "min_%d.hlo" % seed)
    trials = 0

    def fails(p):
        nonlocal trials
        trials += 1
        with open(path, "w") as f:
            f.write(p.render())
        outcome, detail, _, _ = classify(args, path, p.num_partitions, seed)
        return outcome != "invalid" and signature(outcome, detail) == want

    def budget_left():
        return trials < args.minimize_trials and time.time() < budget_end

    best = prog
    changed = True
    while changed and budget_left():
        changed = False
        # 1. An earlier value as the root (drops everything after it).
        for inst in list(best.insts):
            if not budget_left():
                break
            if inst.name == best.root or inst.opcode in ("parameter", "constant") or gen_spmd_module.is_tuple(inst.ty):
                continue
            cand = best.copy()
            cand.root = inst.name
            cand.prune()
            if fails(cand):
                best, changed = cand, True
                break
        if changed:
            continue
        # 2. Bypass an instruction: its users read one of its operands of the same type instead.
        for inst in list(best.insts):
            if not budget_left() or changed:
                break
            if inst.opcode == "parameter":
                continue
            for op in dict.fromkeys(inst.operands):
                if best.by_name[op].ty != inst.ty:
                    continue
                cand = best.copy()
                cand.replace_uses(inst.name, op)
                cand.prune()
                if fails(cand):
                    best, changed = cand, True
                    break
        if changed:
            continue
        # 3. Drop a layout (the compiler fuzzer's).
        for inst in list(best.insts):
            if not budget_left() or changed:
                break
            if inst.layout is None:
                continue
            cand = best.copy()
            cand.by_name[inst.name].layout = None
            if fails(cand):
                best, changed = cand, True
        if changed:
            continue
        # 4. Drop a sharding.
        for inst in list(best.insts):
            if not budget_left():
                break
            if inst.sharding is None:
                continue
            cand = best.copy()
            cand.by_name[inst.name].sharding = None
            if fails(cand):
                best, changed = cand, True
    return best, trials


def header(lines):
    return "".join("// " + l + "\n" if l else "//\n" for l in lines)


def run_seed(args, seed, tmpdir, deadline):
    prog = gen_spmd_module.generate(seed, args.compiler)
    text = prog.render()
    path = os.path.join(tmpdir, "seed_%d.hlo" % seed)
    with open(path, "w") as f:
        f.write(text)
    outcome, detail, out, err = classify(args, path, prog.num_partitions, seed)
    result = {"seed": seed, "outcome": outcome, "detail": detail, "n": 1 if args.compiler else prog.num_partitions}
    if outcome == "pass" or outcome.startswith("tolerated"):
        return result
    os.makedirs(args.failures, exist_ok=True)
    saved = os.path.join(args.failures, "seed_%d.hlo" % seed)
    mode = outcome[outcome.find("(") + 1:-1] if args.compiler and "(" in outcome else None
    cmd = " ".join(xla_run_cmd(args, saved, prog.num_partitions, seed, mode))
    if args.prefuse and os.path.exists(path + ".fused.hlo"):
        # The module that failed is the fused one; the generated one stays next to it for minimizing.
        fused_saved = os.path.join(args.failures, "seed_%d.fused.hlo" % seed)
        with open(path + ".fused.hlo") as src, open(fused_saved, "w") as dst:
            dst.write(src.read())
        cmd = " ".join(xla_run_cmd(args, fused_saved, prog.num_partitions, seed, mode))
    # Errors first: the partitioner's warnings (whole-array fallbacks) also go to stderr.
    lines = [l.replace(path, saved) for l in err.strip().splitlines()]
    err_lines = [l for l in lines if "warning:" not in l] + [l for l in lines if "warning:" in l]
    err_lines += [l for l in out.splitlines() if "outputs match" in l or "output match" in l]
    result["cmd"] = cmd
    result["stderr"] = err_lines[:args.stderr_lines]
    note = ["%s fuzz seed %d: %s (%s)" % (args.kind, seed, outcome, detail), "command: " + cmd, ""] + \
        ["stderr: " + l for l in err_lines[:args.stderr_lines]]
    with open(saved, "w") as f:
        f.write(header(note) + "\n" + text)
    if args.minimize and outcome != "invalid":
        budget_end = min(deadline + 60, time.time() + args.minimize_seconds)
        small, trials = minimize(args, prog, seed, signature(outcome, detail), tmpdir, budget_end)
        if len(small.insts) < len(prog.insts) or small.render() != text:
            min_path = os.path.join(args.failures, "seed_%d.min.hlo" % seed)
            mcmd = " ".join(xla_run_cmd(args, min_path, small.num_partitions, seed, mode))
            with open(min_path, "w") as f:
                f.write(header(["%s fuzz seed %d, shrunk in %d trials: %s" % (args.kind, seed, trials, outcome),
                                "command: " + mcmd]) + "\n" + small.render())
            result["minimized"] = min_path
    return result


def parse_seeds(s):
    m = re.fullmatch(r"(\d+):(\d+)", s)
    if not m:
        raise argparse.ArgumentTypeError("expected A:B")
    return range(int(m.group(1)), int(m.group(2)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--xla-run", default=os.path.join(REPO, "build/bin/xla-run"))
    ap.add_argument("--xla-opt", default=os.path.join(REPO, "build/bin/xla-opt"))
    ap.add_argument("--seeds", type=parse_seeds, default=parse_seeds("0:100"), help="A:B, B excluded")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=0, help="seconds; stop starting seeds after that (0: none)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per xla-run")
    ap.add_argument("--failures", help="default: build/test/{spmd,compiler}_fuzz_failures")
    ap.add_argument("--compiler", action="store_true",
                    help="the compiler fuzzer: unsharded modules with random layouts, JIT against interpreter")
    ap.add_argument("--modes", default="exact,default", help="with --compiler: exact, default or both (in order)")
    ap.add_argument("--atol", default="1e-4")
    ap.add_argument("--max-ulp", type=int, default=16)
    ap.add_argument("--default-numerics", action="store_true", help="run without --exact (see above)")
    ap.add_argument("--prefuse", action="store_true", help="fuse every module before partitioning it (see above)")
    ap.add_argument("--stderr-lines", type=int, default=8)
    ap.add_argument("--no-minimize", dest="minimize", action="store_false")
    ap.add_argument("--minimize-trials", type=int, default=150)
    ap.add_argument("--minimize-seconds", type=float, default=60)
    ap.add_argument("-v", "--verbose", action="store_true", help="print every seed's outcome")
    args = ap.parse_args()
    args.kind = "compiler" if args.compiler else "spmd"
    args.modes = [m for m in args.modes.split(",") if m]
    if not args.modes or any(m not in ("exact", "default") for m in args.modes):
        ap.error("--modes: a comma-separated list of exact and default")
    if not args.failures:
        args.failures = os.path.join(REPO, "build/test/%s_fuzz_failures" % args.kind)
    for tool in (args.xla_run, args.xla_opt):
        if not os.access(tool, os.X_OK):
            print("run_spmd_fuzz: %s is not an executable" % tool, file=sys.stderr)
            return 2

    start = time.time()
    deadline = start + args.time_limit if args.time_limit > 0 else float("inf")
    lock = threading.Lock()
    results, skipped = [], []

    def work(seed):
        if time.time() > deadline:
            skipped.append(seed)
            return None
        try:
            r = run_seed(args, seed, tmpdir, deadline)
        except Exception as e:  # a generator bug: report it as a failure of this seed
            r = {"seed": seed, "outcome": "generator-error", "detail": repr(e), "n": 0, "cmd": "", "stderr": []}
        with lock:
            results.append(r)
            if r["outcome"] != "pass" and not r["outcome"].startswith("tolerated"):
                print("FAIL seed %d (%d partitions): %s: %s" % (seed, r["n"], r["outcome"], r["detail"]))
                if r.get("cmd"):
                    print("  " + r["cmd"])
                for l in r["stderr"]:
                    print("  | " + l)
                if r.get("minimized"):
                    print("  shrunk: " + r["minimized"])
            elif args.verbose:
                print("pass seed %d (%d partitions)" % (seed, r["n"]))
            sys.stdout.flush()
        return r

    with tempfile.TemporaryDirectory(prefix=args.kind + "_fuzz_") as tmpdir:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            list(pool.map(work, args.seeds))

    passed = sum(1 for r in results if r["outcome"] == "pass")
    tolerated = sorted(r["seed"] for r in results if r["outcome"].startswith("tolerated"))
    failed = len(results) - passed - len(tolerated)
    if tolerated:
        print("tolerated default-mode mismatches (discontinuous ops): seeds %s" % " ".join(map(str, tolerated)))
    by = {}
    for r in results:
        if r["outcome"] != "pass" and not r["outcome"].startswith("tolerated"):
            by.setdefault(r["outcome"], []).append(r["seed"])
    for outcome, seeds in sorted(by.items()):
        print("%s: seeds %s" % (outcome, " ".join(str(s) for s in sorted(seeds))))
    if skipped:
        print("%d seeds not run (time limit %gs): %d..%d" % (len(skipped), args.time_limit, min(skipped),
                                                          max(skipped)))
    print("time: %.1fs" % (time.time() - start))
    print("%s fuzz: %d passed, %s%d failed" % (args.kind, passed,
                                                "%d tolerated, " % len(tolerated) if tolerated else "", failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
