#!/usr/bin/env bash
# Added host time per intercepted NCCL call: nccl_call_overhead against the stand-in NCCL without
# the profiler, in summary mode and in trace mode, interleaved over REPEATS runs; prints the median
# ns/call of each and the difference.
#   bench/nccl_overhead.sh BUILD_DIR [REPEATS=5] [ITERATIONS=1000000]
set -euo pipefail
build=${1:?usage: nccl_overhead.sh BUILD_DIR [REPEATS] [ITERATIONS]}
repeats=${2:-5}
iterations=${3:-1000000}
program="$build/bench/nccl_call_overhead"
library="$build/collectors/pmpi/libcommlens.so"
output=$(mktemp -d)
trap 'rm -rf "$output"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run() { # run MODE -> "allreduce_ns group_ns"
  local mode=$1
  if [[ $mode == none ]]; then
    mpirun -np 1 "$program" "$iterations"
  else
    mpirun -np 1 -x LD_PRELOAD="$library" -x COMMLENS_MODE="$mode" -x COMMLENS_QUIET=1 \
      -x COMMLENS_OUTPUT="$output/$mode" "$program" "$iterations"
  fi | awk '{print $2}' | paste -sd' '
}

declare -A allreduces groups
for ((i = 0; i < repeats; ++i)); do
  for mode in none summary trace; do
    read -r allreduce group < <(run "$mode")
    allreduces[$mode]+="$allreduce "
    groups[$mode]+="$group "
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
printf '%-26s %10s %10s %10s %14s %14s\n' call baseline summary trace "summary +ns" "trace +ns"
for call in allreduce group; do
  declare -n values=${call}s
  base=$(median <<<"${values[none]}")
  summary=$(median <<<"${values[summary]}")
  trace=$(median <<<"${values[trace]}")
  name=$([[ $call == allreduce ]] && echo "ncclAllReduce" || echo "ncclGroupStart+Send+End")
  awk -v n="$name" -v b="$base" -v s="$summary" -v t="$trace" \
    'BEGIN {printf "%-26s %10.1f %10.1f %10.1f %14.1f %14.1f\n", n, b, s, t, s - b, t - b}'
done
echo "(ns per call, median of $repeats interleaved runs of $iterations calls against a stand-in NCCL that does nothing; baseline = same loop unprofiled)"
