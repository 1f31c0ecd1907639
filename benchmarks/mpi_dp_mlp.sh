#!/bin/sh
# Issue 16's benchmark: the data-parallel MLP step of benchmarks/hlo/dp_mlp_step.hlo on 8 cores, in one process and
# over 2 MPI processes (4 cores each), with the run time (compilation excluded) and the payload bytes each process
# sent, from xla-run --mpi-report. Usage: benchmarks/mpi_dp_mlp.sh [build dir] [repeats]. Both runs must print the
# same result bits (checked).
set -eu
build=${1:-build}
repeats=${2:-3}
here=$(dirname "$0")
module="$here/hlo/dp_mlp_step.hlo"
mpirun="mpirun --oversubscribe --allow-run-as-root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
while [ "$i" -lt "$repeats" ]; do
  echo "one process:"
  "$build/bin/xla-run" "$module" --mpi-report --output-dir="$tmp/one" | sed 's/^/  /'
  echo "two processes:"
  $mpirun -np 2 "$build/bin/xla-run" "$module" --mpi-report --output-dir="$tmp/two" | sed 's/^/  /'
  cmp "$tmp/one/result_0.npy" "$tmp/two/result_0.npy"
  i=$((i + 1))
done
echo "results identical"
