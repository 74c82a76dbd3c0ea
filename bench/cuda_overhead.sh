#!/usr/bin/env bash
# CUDA collectors' overhead on a copy-heavy MPI program: bench/staged_copy_exchange (2 ranks,
# host-staged device exchange) with COMMLENS_COLLECTORS=pmpi (CUDA collectors off) and =all (on),
# interleaved ROUNDS times; prints medians and the slowdown. Needs a GPU.
# Usage: bench/cuda_overhead.sh BUILD [ROUNDS] [ITERATIONS] [BYTES]
set -euo pipefail
# Open MPI refuses to start as root unless told; CI and containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build=${1:-build}
rounds=${2:-7}
iterations=${3:-2000}
bytes=${4:-1048576}
program="$build/bench/staged_copy_exchange"
preload="$build/collectors/pmpi/libcommlens.so"
out=$(mktemp -d)
run() { # collectors
  COMMLENS_COLLECTORS=$1 COMMLENS_OUTPUT="$out/$1" COMMLENS_QUIET=1 mpirun -np 2 --oversubscribe \
    -x LD_PRELOAD="$preload" -x COMMLENS_COLLECTORS -x COMMLENS_OUTPUT -x COMMLENS_QUIET \
    "$program" "$iterations" "$bytes"
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for _ in $(seq "$rounds"); do
  run pmpi >>"$out/off.txt"
  run all >>"$out/on.txt"
done
off=$(median <"$out/off.txt")
on=$(median <"$out/on.txt")
echo "staged_copy_exchange: $iterations iterations of $bytes B, $rounds rounds interleaved"
echo "CUDA collectors off (pmpi only): median $off s"
echo "CUDA collectors on  (all):       median $on s"
awk -v a="$off" -v b="$on" 'BEGIN {printf "slowdown: %+.2f%%\n", (b / a - 1) * 100}'
copies=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM cuda_copies').fetchone()[0])" "$out/all/commlens.sqlite" 2>/dev/null || echo "?")
echo "copies recorded in the last 'on' run: $copies"
