#!/usr/bin/env bash
# Cost of MPI_T sampling at the default period on a point-to-point latency loop: the same build,
# profiler preloaded both times, MPI_T collector off (COMMLENS_COLLECTORS=pmpi) against on (all),
# alternated ROUNDS times so that machine noise hits both alike; prints medians and the ratio.
#   bench/pvar_overhead.sh [build=build] [iterations=200000] [rounds=5] [single|multiple]
set -euo pipefail
# Open MPI refuses to start as root unless told; CI and containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build=${1:-build}
iterations=${2:-200000}
rounds=${3:-5}
threads=${4:-single}
library=$(realpath "$build/collectors/pmpi/libcommlens.so")
program=$(realpath "$build/bench/pingpong_latency")
output=$(mktemp -d)
trap 'rm -rf "$output"' EXIT

latency() { # collectors
  COMMLENS_COLLECTORS=$1 COMMLENS_OUTPUT=$output COMMLENS_QUIET=1 COMMLENS_MERGE=0 \
    mpirun -np 2 --oversubscribe -x LD_PRELOAD="$library" -x COMMLENS_COLLECTORS -x COMMLENS_OUTPUT \
    -x COMMLENS_QUIET -x COMMLENS_MERGE "$program" "$iterations" "$threads" | awk '/^latency_ns/ {print $2}'
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

off=() on=()
for ((round = 0; round < rounds; ++round)); do
  off+=("$(latency pmpi)")
  on+=("$(latency all)")
done
off_median=$(printf '%s\n' "${off[@]}" | median)
on_median=$(printf '%s\n' "${on[@]}" | median)
echo "mpit off (ns): ${off[*]}"
echo "mpit on  (ns): ${on[*]}"
awk -v off="$off_median" -v on="$on_median" -v threads="$threads" 'BEGIN {
  printf "pingpong latency (%s): mpit off %.1f ns, on %.1f ns (default 100 ms period): overhead %+.2f%% (target <= 2%%)\n",
         threads, off, on, (on / off - 1) * 100 }'
