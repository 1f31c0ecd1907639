#!/usr/bin/env python3
"""HLO corpus conformance test for xla-opt (Python standard library only).

Driven by <corpus>/hlo/manifest.tsv (see <corpus>/README.md). Every check runs `xla-opt FILE [flags]` as a
subprocess, whose contract is: print the module to stdout and exit 0, or exit 1 after printing
`file:line:col: error: ...` diagnostics. Any other exit (a signal, an exit code above 128, anything else) is a
crash and always a failure.

Categories:
  parser_test     XLA's own parser tests: round trips (long and short form, byte for byte), non-round-trip
                  input/output pairs, should-parse inputs and must-reject inputs. Every case must pass.
  fixed_point     every other HLO text file XLA expects to be valid (not `templated`): print(parse(f)) = P1 and
                  print(parse(P1)) == P1, both with --no-verify. Must pass for >= 99% of the files.
  verify          the same files (and the parser tests that parse) run again WITH verification; the failures
                  are reported as a separate tally and do not gate.
  expected_error  files outside parser_test that XLA's tests expect to fail somewhere (often in a later pass,
                  which xlac does not have): a rejection must be a proper diagnostic, acceptance is reported.
Exit status: 0 pass, 1 fail, 77 corpus absent (ctest SKIP_RETURN_CODE).
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

# Files deliberately not run. Only text that is not a complete HLO module as stored belongs here: XLA's C++ tests
# complete it before parsing (filling placeholders, pasting a prefix, appending the rest). The rules look at the
# file's content, never its name, so they apply equally to corpus files this project has not seen. A file that is
# valid HLO but that xlac mishandles is a failure to fix, not a skip.
_PLACEHOLDER_RES = [
    (re.compile(r"<<\w+>>"), "template placeholder <<NAME>>"),
    (re.compile(r"\{\{[A-Z_][A-Z0-9_]*\}\}"), "template placeholder {{NAME}}"),
    (re.compile(r"\$[A-Za-z_]\w*|\$\d"), "template placeholder $NAME"),
    # An upper-case identifier where an element type must stand (`TYPE[]`, `DTYPE1[32]`): every HLO type is
    # lower-case.
    (re.compile(r"(?<![\w.%-])[A-Z][A-Z0-9_]*\[[\d,\]]"), "template placeholder used as an element type"),
    (re.compile(r"\b(?:replica_groups|source_target_pairs|dimensions|slice_sizes)=[A-Z][A-Z0-9_]*\b"),
     "template placeholder used as an attribute value"),
]


def _strip_strings_and_comments(text):
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


# `name = f32[2] op(`, `name = (f32[], s32[]) op(` or `name = op(`; module attributes (`attr={`, `attr=2`) do not match.
_INSTRUCTION_RE = re.compile(r"[\w.%-]\s*=\s*(?:[a-z][a-z0-9]*\[|\(|[a-z][a-z-]*\()")


def incomplete_reason(text):
    """Why `text` is not a complete module as stored (placeholder or fragment), or None."""
    code = _strip_strings_and_comments(text)
    for pattern, reason in _PLACEHOLDER_RES:
        if pattern.search(code):
            return reason
    if code.count("{") != code.count("}") or code.count("(") != code.count(")"):
        return "fragment: unbalanced brackets (the C++ test appends the rest of the module)"
    if not _INSTRUCTION_RE.search(code):
        return "fragment: a module header without computations (the C++ test appends them)"
    return None


_MISSING_COMPUTATION_RE = re.compile(r"computation does not exist: ([\w.\-]+)")


def missing_prefix_reason(text, stderr):
    """If parsing failed only because the text calls a computation it never defines, the C++ test pastes a prefix
    defining it: report that, else None."""
    m = _MISSING_COMPUTATION_RE.search(stderr)
    if not m:
        return None
    name = m.group(1)
    defined = re.search(r"(?m)^\s*(?:ENTRY\s+)?%?" + re.escape(name) + r"\b[^=\n]*\{\s*$", text)
    if defined:
        return None
    return f"calls computation '{name}', defined in a prefix the C++ test concatenates"


SKIP_EXIT_CODE = 77
FIXED_POINT_THRESHOLD = 0.99
HLO_FORMATS = ("hlo_module", "hlo_no_header")
# A located diagnostic as ir/diagnostics.h renders it: "file:line:col: error: message".
LOCATED_ERROR_RE = re.compile(r"^[^\n]*?:\d+:\d+: error: ", re.M)


class Run:
    """Outcome of one xla-opt invocation."""

    def __init__(self, argv, returncode, stdout, stderr, timed_out=False):
        self.argv = argv
        self.returncode = returncode
        self.stdout = stdout  # bytes: compared byte for byte
        self.stderr = stderr.decode("utf-8", errors="replace")
        self.timed_out = timed_out

    @property
    def ok(self):
        return not self.timed_out and self.returncode == 0

    def crashed(self):
        """A signal, a timeout or an exit code other than 0/1: never acceptable, whatever the input."""
        return self.timed_out or self.returncode not in (0, 1)

    def contract_violation(self):
        """None if the exit honours the contract, else a description (crash, timeout, odd exit, no diagnostic)."""
        if self.timed_out:
            return "timeout"
        rc = self.returncode
        if rc < 0:
            return f"crash: killed by signal {-rc}"
        if rc > 128:
            return f"crash: exit code {rc} (signal {rc - 128}?)"
        if rc not in (0, 1):
            return f"unexpected exit code {rc}"
        if rc == 1 and not LOCATED_ERROR_RE.search(self.stderr):
            return "exit 1 without a 'file:line:col: error:' diagnostic"
        return None

    def first_stderr_line(self):
        """The first error line (warnings may precede it), else the first non-empty line."""
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        for line in lines:
            if "error:" in line:
                return line
        return lines[0] if lines else "(no stderr)"

    def describe_failure(self):
        return self.contract_violation() or self.first_stderr_line()


class Outcome:
    """Result of one check of one file."""

    def __init__(self, file, category, passed, detail="", crash=False, verify=None, verify_detail="", kind=""):
        self.file = file
        self.category = category
        self.passed = passed
        self.detail = detail  # first line of stderr or a description of the mismatch
        self.crash = crash  # the 0/1 exit contract was violated (crash, timeout, odd exit): always fatal
        self.verify = verify  # None: not run; True/False: the verified run's result
        self.verify_detail = verify_detail
        self.kind = kind  # sub-category (role, or accepted/rejected for expected_error)


class Runner:
    def __init__(self, xla_opt, corpus_dir, timeout, tmpdir):
        self.xla_opt = xla_opt
        self.corpus_dir = corpus_dir
        self.timeout = timeout
        self.tmpdir = tmpdir

    def path(self, rel):
        return os.path.join(self.corpus_dir, rel)

    def run(self, file, *flags):
        argv = [self.xla_opt, file, *flags]
        try:
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=self.timeout)
            r = Run(argv, p.returncode, p.stdout, p.stderr)
        except subprocess.TimeoutExpired as e:
            r = Run(argv, -9, e.stdout or b"", e.stderr or b"", timed_out=True)
        # Diagnostics name files relative to the corpus root, as the manifest does.
        r.stderr = r.stderr.replace(self.corpus_dir + os.sep, "").replace(self.tmpdir + os.sep, "<printed>/")
        return r

    def verified_run(self, rel):
        r = self.run(self.path(rel))
        if r.ok:
            return r, True, ""
        return r, False, r.describe_failure()

    # --- parser_test -------------------------------------------------------------------------------------------

    def parser_test(self, row, partner):
        rel, role, expect = row["file"], row["role"], row["expect"]
        path = self.path(rel)
        if expect == "error":
            # Parity with XLA's parser: --strict, since by default xlac reads a few inputs XLA rejects (but real
            # exporters write, with one meaning) with a warning.
            r = self.run(path, "--strict")
            bad = r.contract_violation()
            if r.ok:
                return Outcome(rel, "parser_test", False, "accepted, but XLA rejects this input", kind="error")
            return Outcome(rel, "parser_test", bad is None, bad or "", crash=r.crashed(), kind="error")

        if role == "roundtrip_long":
            flags, want, exact = ["--no-verify"], read_bytes(path), True
        elif role == "roundtrip_short":
            flags, want, exact = ["--no-verify", "--print-short"], read_bytes(path), True
        elif role == "nonroundtrip_input":
            # XLA's HloNonRoundtripParserTest compares ShortParsable() output with the expected text, both with
            # surrounding whitespace stripped.
            if partner is None:
                return Outcome(rel, "parser_test", False, "manifest has no nonroundtrip_output partner", kind=role)
            flags, want, exact = ["--no-verify", "--print-short"], read_bytes(self.path(partner)), False
        else:  # should-parse inputs and the non-round-trip outputs: parsing is the check
            flags, want, exact = ["--no-verify"], None, True

        r = self.run(path, *flags)
        kind = role or "parse"
        if not r.ok:
            return Outcome(rel, "parser_test", False, r.describe_failure(), crash=r.crashed(), kind=kind)
        passed, detail = True, ""
        if want is not None:
            got, exp = (r.stdout, want) if exact else (r.stdout.strip(), want.strip())
            if got != exp:
                passed, detail = False, "output differs: " + first_difference(exp, got)
        _, vok, vdetail = self.verified_run(rel)
        return Outcome(rel, "parser_test", passed, detail, verify=vok, verify_detail=vdetail, kind=kind)

    # --- fixed point -------------------------------------------------------------------------------------------

    def fixed_point(self, row, index):
        rel = row["file"]
        r1 = self.run(self.path(rel), "--no-verify")
        if not r1.ok and not r1.crashed():
            reason = missing_prefix_reason(read_text(self.corpus_dir, rel), r1.stderr)
            if reason:
                return Outcome(rel, "skipped", True, reason, kind="skipped")
        if not r1.ok:
            return Outcome(rel, "fixed_point", False, "parse: " + r1.describe_failure(),
                           crash=r1.crashed(), kind="parse")
        printed = os.path.join(self.tmpdir, f"{index:05d}.{os.path.basename(rel)}")
        with open(printed, "wb") as f:
            f.write(r1.stdout)
        try:
            r2 = self.run(printed, "--no-verify")
        finally:
            os.unlink(printed)
        if not r2.ok:
            return Outcome(rel, "fixed_point", False, "re-parse of printed output: " + r2.describe_failure(),
                           crash=r2.crashed(), kind="reparse")
        if r2.stdout != r1.stdout:
            return Outcome(rel, "fixed_point", False, "not a fixed point: " + first_difference(r1.stdout, r2.stdout),
                           kind="fixed_point")
        rv, vok, vdetail = self.verified_run(rel)
        crash = rv.crashed()
        return Outcome(rel, "fixed_point", True, verify=vok, verify_detail=vdetail, crash=crash,
                       detail="verify: " + vdetail if crash else "")

    # --- expected errors outside parser_test -------------------------------------------------------------------

    def expected_error(self, row):
        rel = row["file"]
        # --strict as for the parser tests: XLA's verdict, without the exporters' leniencies.
        r = self.run(self.path(rel), "--strict")
        if r.ok:
            return Outcome(rel, "expected_error", True, kind="accepted")
        bad = r.contract_violation()
        if bad:
            return Outcome(rel, "expected_error", False, bad, crash=r.crashed(), kind="bad_exit")
        return Outcome(rel, "expected_error", True, r.first_stderr_line(), kind="rejected")


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def first_difference(expected, got):
    """'line N: expected <...> got <...>' for the first differing line of two byte strings."""
    el, gl = expected.split(b"\n"), got.split(b"\n")
    for i in range(max(len(el), len(gl))):
        e = el[i] if i < len(el) else b"<end of output>"
        g = gl[i] if i < len(gl) else b"<end of output>"
        if e != g:
            return f"line {i + 1}: expected {clip(e)!r} got {clip(g)!r}"
    return "same lines, different bytes"


def clip(b, n=160):
    s = b.decode("utf-8", errors="replace")
    return s if len(s) <= n else s[:n] + "..."


def normalize(message):
    """A grouping key for a failure message: drop the location prefix, names and numbers."""
    m = re.sub(r"^[^\n]*?:\d+:\d+: error: ", "", message)
    m = re.sub(r"^(parse|re-parse of printed output|verify): ", "", m)
    if m.startswith("exit 1 without"):
        return m
    if m.startswith(("crash", "unexpected exit code", "timeout")):
        return m.split(":")[0]
    m = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'_'", m)
    m = re.sub(r"%?[A-Za-z_][\w.\-]*\.\d+", "_", m)
    m = re.sub(r"\d+", "N", m)
    if m.startswith("not a fixed point") or m.startswith("output differs"):
        return m.split(":")[0]
    return m[:120]


def load_manifest(corpus_dir):
    with open(os.path.join(corpus_dir, "hlo", "manifest.tsv"), newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def read_text(corpus_dir, rel):
    with open(os.path.join(corpus_dir, rel), encoding="utf-8", errors="replace") as f:
        return f.read()


def plan(rows, file_filter, corpus_dir):
    """Splits the manifest into jobs and the files not run (with a reason)."""
    by_test = collections.defaultdict(dict)
    for row in rows:
        if row["role"] in ("nonroundtrip_input", "nonroundtrip_output"):
            by_test[row["test"]][row["role"]] = row["file"]

    jobs, not_run = [], collections.Counter()
    skipped = []
    for row in rows:
        rel = row["file"]
        if file_filter and not re.search(file_filter, rel):
            continue
        flags = row["flags"].split(",")
        if row["format"] not in HLO_FORMATS:
            not_run[f"format {row['format']} (not HLO text)"] += 1
            continue
        if "templated" in flags:
            not_run["templated ($0/%s placeholders filled in by the C++ test)"] += 1
            continue
        if row["tier"] != "parser_test":
            reason = incomplete_reason(read_text(corpus_dir, rel))
            if reason:
                skipped.append((rel, reason))
                continue
        if row["tier"] == "parser_test":
            partner = by_test[row["test"]].get("nonroundtrip_output") if row["role"] == "nonroundtrip_input" else None
            jobs.append(("parser_test", row, partner))
        elif row["expect"] == "error":
            jobs.append(("expected_error", row, None))
        else:
            jobs.append(("fixed_point", row, None))
    return jobs, not_run, skipped


def execute(runner, jobs, workers):
    def one(i_job):
        i, (cat, row, partner) = i_job
        if cat == "parser_test":
            return runner.parser_test(row, partner)
        if cat == "fixed_point":
            return runner.fixed_point(row, i)
        return runner.expected_error(row)

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(one, enumerate(jobs)))
    return sorted(outcomes, key=lambda o: (o.category, o.file))


class Summary:
    def __init__(self, outcomes, not_run, skipped):
        # Files found incomplete only when run (a missing prefix computation) join the statically skipped ones.
        self.skipped = sorted(skipped + [(o.file, o.detail) for o in outcomes if o.category == "skipped"])
        outcomes = [o for o in outcomes if o.category != "skipped"]
        self.outcomes = outcomes
        self.not_run = not_run
        self.by_cat = collections.defaultdict(list)
        for o in outcomes:
            self.by_cat[o.category].append(o)
        self.crashes = [o for o in outcomes if o.crash]
        fp = self.by_cat["fixed_point"]
        self.fp_total = len(fp)
        self.fp_passed = sum(o.passed for o in fp)
        self.fp_rate = self.fp_passed / self.fp_total if self.fp_total else 1.0
        self.pt_failures = [o for o in self.by_cat["parser_test"] if not o.passed]
        self.verified = [o for o in outcomes if o.verify is not None]
        self.verify_failures = [o for o in self.verified if not o.verify]
        self.reasons = []
        if self.pt_failures:
            self.reasons.append(f"{len(self.pt_failures)} parser_test case(s) failed")
        if self.fp_rate < FIXED_POINT_THRESHOLD:
            self.reasons.append(f"fixed-point pass rate {pct(self.fp_rate)} < {pct(FIXED_POINT_THRESHOLD)}")
        if self.crashes:
            self.reasons.append(f"{len(self.crashes)} file(s) crashed, timed out or broke the exit-code contract")

    @property
    def passed(self):
        return not self.reasons

    def tally_rows(self):
        rows = []
        for cat in ("parser_test", "fixed_point", "expected_error"):
            outs = self.by_cat.get(cat, [])
            if cat == "parser_test":  # pass/total per role
                kinds = collections.Counter((o.kind, o.passed) for o in outs)
                detail = ", ".join(f"{k} {kinds[(k, True)]}/{kinds[(k, True)] + kinds[(k, False)]}"
                                   for k in sorted({k for k, _ in kinds}))
            elif cat == "fixed_point":  # where the failures stopped
                kinds = collections.Counter(o.kind for o in outs if not o.passed)
                detail = "failed at: " + (", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none")
            else:
                kinds = collections.Counter(o.kind for o in outs)
                detail = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
            rows.append((cat, sum(o.passed for o in outs), len(outs), detail))
        return rows

    def groups(self, outcomes, key):
        groups = collections.defaultdict(list)
        for o in outcomes:
            groups[normalize(key(o))].append(o)
        return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def pct(x):
    return f"{100.0 * x:.2f}%"


def print_text(s, verbose_groups):
    w = sys.stdout.write
    w("== HLO corpus conformance ==\n")
    for cat, passed, total, detail in s.tally_rows():
        w(f"{cat:15} {passed:5}/{total:<5} passed   ({detail})\n")
    w(f"fixed-point pass rate: {pct(s.fp_rate)} (threshold {pct(FIXED_POINT_THRESHOLD)})\n")
    w(f"verify (not gating): {len(s.verified) - len(s.verify_failures)}/{len(s.verified)} parsed files verify\n")
    accepted = [o for o in s.by_cat["expected_error"] if o.kind == "accepted"]
    if accepted:
        w(f"expected_error: {len(accepted)} file(s) accepted; XLA rejects them in a pass xlac does not run yet\n")
    w("not run: " + ("; ".join(f"{n} {why}" for why, n in sorted(s.not_run.items())) or "none") + "\n")
    w(f"deliberately skipped ({len(s.skipped)}):" + ("" if s.skipped else " none") + "\n")
    for rel, why in s.skipped:
        w(f"  {rel}: {why}\n")

    failures = [o for o in s.outcomes if not o.passed or o.crash]
    if failures:
        w(f"\n-- failures ({len(failures)}) --\n")
        for o in failures:
            tag = "CRASH " if o.crash else ""
            w(f"{tag}[{o.category}/{o.kind or '-'}] {o.file}: {o.detail}\n")
        w("\n-- failure groups --\n")
        for key, outs in s.groups(failures, lambda o: o.detail):
            w(f"{len(outs):5}  {key}\n       e.g. {outs[0].file}\n")
    if s.verify_failures:
        w(f"\n-- verify failures ({len(s.verify_failures)}, not gating), grouped --\n")
        for key, outs in s.groups(s.verify_failures, lambda o: o.verify_detail):
            w(f"{len(outs):5}  {key}\n       e.g. {outs[0].file}: {outs[0].verify_detail}\n")
        if verbose_groups:
            for o in s.verify_failures:
                w(f"  {o.file}: {o.verify_detail}\n")
    w("\nRESULT: " + ("PASS" if s.passed else "FAIL: " + "; ".join(s.reasons)) + "\n")


def write_report(s, path, repo, corpus_dir, elapsed):
    md = ["# HLO corpus conformance report", ""]
    manifest = os.path.join(os.path.relpath(corpus_dir, repo), "hlo", "manifest.tsv")
    md.append(f"Generated by `test/corpus/run_hlo_corpus.py` over `{manifest}` in {elapsed:.0f} s.")
    md.append("")
    md.append("**Result: " + ("PASS" if s.passed else "FAIL — " + "; ".join(s.reasons)) + "**")
    md += ["", "| category | passed | total | by kind |", "|---|---:|---:|---|"]
    for cat, passed, total, detail in s.tally_rows():
        md.append(f"| {cat} | {passed} | {total} | {detail} |")
    md += ["", f"- fixed-point pass rate: {pct(s.fp_rate)} (gate: {pct(FIXED_POINT_THRESHOLD)})",
           f"- verification (not gating): {len(s.verified) - len(s.verify_failures)} of {len(s.verified)} parsed "
           "files verify",
           f"- crashes / timeouts / exit-code contract violations: {len(s.crashes)}"]
    for why, n in sorted(s.not_run.items()):
        md.append(f"- not run: {n} — {why}")
    md.append(f"- deliberately skipped: {len(s.skipped)}")
    for rel, why in s.skipped:
        md.append(f"  - `{rel}`: {why}")
    failures = [o for o in s.outcomes if not o.passed or o.crash]
    if failures:
        md += ["", "## Failures, grouped", "", "| count | failure | example |", "|---:|---|---|"]
        for key, outs in s.groups(failures, lambda o: o.detail):
            md.append(f"| {len(outs)} | {md_cell(key)} | `{outs[0].file}` |")
    if s.verify_failures:
        md += ["", "## Verification failures (not gating), grouped", "", "| count | diagnostic | example |",
               "|---:|---|---|"]
        for key, outs in s.groups(s.verify_failures, lambda o: o.verify_detail):
            md.append(f"| {len(outs)} | {md_cell(key)} | `{outs[0].file}` |")
    with open(path, "w") as f:
        f.write("\n".join(md) + "\n")


def md_cell(s):
    return s.replace("|", "\\|").replace("\n", " ")


def main():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--xla-opt", default=os.path.join(repo, "build", "bin", "xla-opt"))
    ap.add_argument("--corpus", default=os.path.join(repo, "..", "shared", "corpus"),
                    help="corpus root holding hlo/manifest.tsv (default: ../shared/corpus from the repo root)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per xla-opt invocation")
    ap.add_argument("--filter", help="only files whose manifest path matches this regex")
    ap.add_argument("--report", help="also write a markdown summary to this file")
    ap.add_argument("--list-verify-failures", action="store_true", help="list every verify failure, not just groups")
    args = ap.parse_args()

    corpus = os.path.abspath(args.corpus)
    if not os.path.isfile(os.path.join(corpus, "hlo", "manifest.tsv")):
        print(f"SKIP: HLO corpus not found at {corpus} (expected hlo/manifest.tsv there; set XLAC_CORPUS_DIR)")
        return SKIP_EXIT_CODE
    if not os.access(args.xla_opt, os.X_OK):
        print(f"error: xla-opt not found or not executable at {args.xla_opt}", file=sys.stderr)
        return 1

    jobs, not_run, skipped = plan(load_manifest(corpus), args.filter, corpus)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="xlac-corpus-") as tmp:
        outcomes = execute(Runner(os.path.abspath(args.xla_opt), corpus, args.timeout, tmp), jobs, args.jobs)
    elapsed = time.monotonic() - start
    s = Summary(outcomes, not_run, skipped)
    print_text(s, args.list_verify_failures)
    print(f"({len(jobs)} files, {elapsed:.0f} s)")
    if args.report:
        write_report(s, args.report, repo, corpus, elapsed)
    return 0 if s.passed else 1


if __name__ == "__main__":
    sys.exit(main())
