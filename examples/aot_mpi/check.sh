#!/bin/sh
# ctest aot_mpi_example: the AOT-compiled data-parallel step prints the same bits in one process and split over 2
# and 4 MPI processes. Usage: check.sh EXAMPLE MPIRUN
set -eu
example=$1
mpirun=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$example" > "$tmp/one"
"$mpirun" --oversubscribe --allow-run-as-root -np 2 "$example" > "$tmp/two"
"$mpirun" --oversubscribe --allow-run-as-root -np 4 "$example" > "$tmp/four"
lines=$(wc -l < "$tmp/one")
if [ "$lines" -ne 2048 ]; then
  echo "aot_mpi_example: expected 2048 values in one process, got $lines" >&2
  exit 1
fi
cmp "$tmp/one" "$tmp/two"
cmp "$tmp/one" "$tmp/four"
echo "aot_mpi_example: 1, 2 and 4 processes agree bit for bit"
