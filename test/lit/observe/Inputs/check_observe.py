"""Checks xla-run's --metrics and --trace output (test/lit/observe/).

  check_observe.py metrics OUT.txt CORES   OUT holds --spmd-report then --metrics: every core's bytes sent per
                                           collective kind equal the report's bytes per core, summed per kind.
  check_observe.py trace TRACE.json CORES  valid Chrome trace JSON: a "compile" track with pass slices and one
                                           "core N" track per core, each with kernel and collective slices.
"""
import collections
import json
import re
import sys


def fail(message):
    sys.exit("check_observe: " + message)


def check_metrics(path, cores):
    text = open(path).read()
    predicted = collections.Counter()
    for m in re.finditer(r"^  (\S+) %\S+ for %\S+: group of \d+, (\d+) bytes per core$", text, re.M):
        predicted[m.group(1)] += int(m.group(2))
    if not predicted:
        fail("no collectives in the SPMD report")
    measured = collections.defaultdict(dict)
    pattern = r"^Metric: Core(\d+)\.CollectiveBytesSent\.(\S+)\n  TotalSamples: 1\n  Accumulator: (?:\S+ \()?(\d+)B\)?$"
    for m in re.finditer(pattern, text, re.M):
        measured[int(m.group(1))][m.group(2)] = int(m.group(3))
    if sorted(measured) != list(range(cores)):
        fail(f"bytes sent reported for cores {sorted(measured)}, expected 0..{cores - 1}")
    for core, kinds in sorted(measured.items()):
        if kinds != dict(predicted):
            fail(f"core {core} sent {kinds}, the SPMD report predicts {dict(predicted)}")
    print(f"metrics: {cores} cores sent {dict(predicted)} as predicted")


def check_trace(path, cores):
    trace = json.load(open(path))
    events = trace["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    expected = {0: "compile", **{c + 1: f"core {c}" for c in range(cores)}}
    if names != expected:
        fail(f"tracks {names}, expected {expected}")
    slices = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            if not isinstance(e["ts"], (int, float)) or e["dur"] < 0:
                fail(f"bad slice {e}")
            slices[e["tid"]].append(e)
    if not any(e["cat"] == "pass" for e in slices[0]):
        fail("no pass slices on the compile track")
    for c in range(cores):
        mine = slices[c + 1]
        collectives = [e for e in mine if e["cat"] == "collective"]
        kernels = [e for e in mine if e["cat"] not in ("collective", "execute")]
        if not collectives or not kernels:
            fail(f"core {c}: {len(kernels)} kernel and {len(collectives)} collective slices")
        for e in collectives:
            if "bytes_sent" not in e["args"] or "wait_us" not in e["args"]:
                fail(f"collective slice without bytes or wait: {e}")
    print(f"trace: {len(events)} events, {cores} core tracks")


if __name__ == "__main__":
    kind, path, cores = sys.argv[1], sys.argv[2], int(sys.argv[3])
    {"metrics": check_metrics, "trace": check_trace}[kind](path, cores)
