#!/usr/bin/env bash
# CUDA collectors' overhead on a copy-heavy MPI program: bench/staged_copy_exchange (2 ranks,
# host-staged device exchange) with the CUDA collectors off (COMMLENS_COLLECTORS=pmpi,mpit), with
# only the NVTX ranges (pmpi,mpit,nvtx) and with all on (all), interleaved ROUNDS times; prints
# medians and the slowdowns against off. Needs a GPU.
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
fastest() { sort -g | head -1; }
configurations=(pmpi,mpit pmpi,mpit,nvtx all)
for _ in $(seq "$rounds"); do
  for collectors in "${configurations[@]}"; do
    run "$collectors" >>"$out/$collectors.txt"
  done
done
echo "staged_copy_exchange: $iterations iterations of $bytes B, $rounds rounds interleaved"
# Medians, and the fastest rounds (machine noise only ever adds time, so the fastest round is the
# steadier estimate when the noise is as large as the effect).
off=$(median <"$out/pmpi,mpit.txt")
off_fastest=$(fastest <"$out/pmpi,mpit.txt")
for collectors in "${configurations[@]}"; do
  seconds=$(median <"$out/$collectors.txt")
  best=$(fastest <"$out/$collectors.txt")
  awk -v c="$collectors" -v a="$off" -v b="$seconds" -v fa="$off_fastest" -v fb="$best" \
    'BEGIN {printf "COMMLENS_COLLECTORS=%-16s median %.6f s (%+.2f%%)  fastest %.6f s (%+.2f%%)\n", c, b, (b / a - 1) * 100, fb, (fb / fa - 1) * 100}'
done
copies=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM cuda_copies').fetchone()[0])" "$out/all/commlens.sqlite" 2>/dev/null || echo "?")
echo "copies recorded in the last 'on' run: $copies"
