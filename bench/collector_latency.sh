#!/usr/bin/env bash
# What a collector adds to a point-to-point latency loop (bench/pingpong_latency, host buffers):
# the same build, profiler preloaded both times, COMMLENS_COLLECTORS=OFF against =ON, alternated
# ROUNDS times so that machine noise hits both alike; prints medians and the ratio. The default
# pair measures MPI_T sampling at the default period (pmpi against pmpi,mpit; not `all`, which on
# a GPU machine adds the CUDA collectors too); pmpi,mpit against all measures the CUDA collectors'
# cost on MPI calls that move no GPU data. ON_ENV, NAME=VALUE words, is set for the ON runs only:
# pmpi against pmpi with "COMMLENS_RUNTIME=on COMMLENS_RUNTIME_COLLECTIVES=allreduce,p2p" measures
# what the runtime's point-to-point part costs host-buffer messages (one driver query each).
#   bench/collector_latency.sh [build=build] [iterations=200000] [rounds=5] [single|multiple]
#                              [OFF=pmpi] [ON=pmpi,mpit] [ON_ENV=]
set -euo pipefail
# Open MPI refuses to start as root unless told; CI and containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build=${1:-build}
iterations=${2:-200000}
rounds=${3:-5}
threads=${4:-single}
off_collectors=${5:-pmpi}
on_collectors=${6:-pmpi,mpit}
read -r -a on_environment <<<"${7:-}"
library=$(realpath "$build/collectors/pmpi/libcommlens.so")
program=$(realpath "$build/bench/pingpong_latency")
output=$(mktemp -d)
trap 'rm -rf "$output"' EXIT

latency() { # collectors [NAME=VALUE...]
  local collectors=$1 exports=()
  shift
  for setting in "$@"; do exports+=(-x "$setting"); done
  COMMLENS_COLLECTORS=$collectors COMMLENS_OUTPUT=$output COMMLENS_QUIET=1 COMMLENS_MERGE=0 \
    mpirun -np 2 --oversubscribe -x LD_PRELOAD="$library" -x COMMLENS_COLLECTORS -x COMMLENS_OUTPUT \
    -x COMMLENS_QUIET -x COMMLENS_MERGE "${exports[@]}" "$program" "$iterations" "$threads" |
    awk '/^latency_ns/ {print $2}'
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

off=() on=()
for ((round = 0; round < rounds; ++round)); do
  off+=("$(latency "$off_collectors")")
  on+=("$(latency "$on_collectors" "${on_environment[@]}")")
done
off_median=$(printf '%s\n' "${off[@]}" | median)
on_median=$(printf '%s\n' "${on[@]}" | median)
echo "$off_collectors (ns): ${off[*]}"
echo "$on_collectors (ns): ${on[*]}"
awk -v off="$off_median" -v on="$on_median" -v threads="$threads" -v a="$off_collectors" -v b="$on_collectors${7:+ $7}" 'BEGIN {
  printf "pingpong latency (%s): %s %.1f ns, %s %.1f ns: overhead %+.2f%%\n", threads, a, off, b, on, (on / off - 1) * 100 }'
