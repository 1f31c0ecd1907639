#!/usr/bin/env bash
# Runs a parser fuzzer (hlo_parser_fuzzer, or stablehlo_parser_fuzzer with --format stablehlo) over a fresh seed
# corpus, either for a fixed number of inputs from a fixed seed (--runs, --seed: what ctest runs, so a result depends
# only on the code and the corpus, never on the machine's speed) or for a bounded time (--seconds: long campaigns by
# hand). Exits non-zero if the fuzzer finds a crash, sanitizer report, leak, timeout or out-of-memory; the
# reproducer is left in <out>/fuzz-artifacts/.
#
#   test/fuzz/run_fuzzer.sh [--fuzzer BIN] [--format hlo|stablehlo] [--corpus DIR] [--out BUILD_DIR]
#                           [--seconds N | --runs N [--seed S]] [-- extra libFuzzer flags]
# Reproduce a finding: build/bin/hlo_parser_fuzzer build/fuzz-artifacts/crash-<sha1>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

fuzzer="$repo/build/bin/hlo_parser_fuzzer"
corpus="$repo/../shared/corpus"
out="$repo/build"
seconds=60
runs=
seed=1
format=hlo
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --fuzzer) fuzzer=$2; shift 2 ;;
    --corpus) corpus=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --format) format=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "run_fuzzer.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [ ! -x "$fuzzer" ]; then
  echo "run_fuzzer.sh: fuzzer binary not found at $fuzzer (build target hlo_parser_fuzzer with clang)" >&2
  exit 1
fi

case "$format" in
  hlo) suffix=""; dict=(-dict="$here/hlo.dict") ;;
  stablehlo) suffix="-stablehlo"; dict=(-dict="$here/stablehlo.dict") ;;
  *) echo "run_fuzzer.sh: unknown --format $format (hlo, stablehlo)" >&2; exit 2 ;;
esac
seeds="$out/fuzz-seeds$suffix"
work="$out/fuzz-work$suffix"        # new inputs found by this run; fresh each time so runs are comparable
artifacts="$out/fuzz-artifacts$suffix"
python3 "$here/build_seed_corpus.py" --format "$format" --corpus "$corpus" --out "$seeds" --max-bytes 32768
rm -rf "$work"
mkdir -p "$work" "$artifacts"

# Leaks are real bugs here; UBSan reports already abort (-fno-sanitize-recover), print their stacks too.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

# A fixed run count and seed make the run deterministic; a time bound does not, so it is only for runs by hand.
# Coverage steers the mutations, and it depends on heap addresses (pointer-keyed hash maps probe differently), so
# the addresses must repeat too: no address-space randomization (setarch -R) and no periodic, time-driven re-reading
# of the corpus directory (-reload=0), whose allocations would shift the heap at timing-dependent points.
launcher=()
if [ -n "$runs" ]; then
  budget=(-runs="$runs" -seed="$seed" -reload=0)
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    launcher=(setarch "$(uname -m)" -R)
  else
    echo "run_fuzzer.sh: warning: cannot turn off address-space randomization (setarch -R); the run may not repeat" >&2
  fi
else
  budget=(-max_total_time="$seconds")
fi

set -x
exec "${launcher[@]}" "$fuzzer" \
  "${budget[@]}" -rss_limit_mb=4096 -timeout=30 -max_len=32768 \
  "${dict[@]}" -artifact_prefix="$artifacts/" -print_final_stats=1 \
  "${extra[@]}" "$work" "$seeds"
