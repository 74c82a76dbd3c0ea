#!/usr/bin/env bash
# Added cost per intercepted call: PROGRAM's timed loops without the profiler, in summary mode and
# in trace mode, interleaved over REPEATS runs; prints the median ns/call of each and the
# difference. PROGRAM prints one "LABEL NS_PER_CALL" line per loop: call_overhead (MPI calls, the
# default) or nccl_call_overhead (NCCL calls against the stand-in NCCL that does nothing).
#   bench/overhead.sh BUILD_DIR [REPEATS=7] [ITERATIONS=2000000] [PROGRAM=call_overhead]
# OVERHEAD_LIBRARY=path measures another libcommlens.so (an earlier build) with BUILD_DIR's programs.
# OVERHEAD_VARIANTS="MODE/COLLECTORS ..." adds variants with only those collectors (e.g.
# "summary/pmpi,nvtx": summary mode without the CUDA collector), to tell whose cost is whose.
set -euo pipefail
build=${1:?usage: overhead.sh BUILD_DIR [REPEATS] [ITERATIONS] [PROGRAM]}
repeats=${2:-7}
iterations=${3:-2000000}
program="$build/bench/${4:-call_overhead}"
library="${OVERHEAD_LIBRARY:-$build/collectors/pmpi/libcommlens.so}"
output=$(mktemp -d)
trap 'rm -rf "$output"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run() { # run MODE -> "LABEL NS" lines
  local mode=$1
  if [[ $mode == none ]]; then
    mpirun -np 1 "$program" "$iterations"
  elif [[ $mode == */* ]]; then
    mpirun -np 1 -x LD_PRELOAD="$library" -x COMMLENS_MODE="${mode%%/*}" -x COMMLENS_COLLECTORS="${mode#*/}" \
      -x COMMLENS_QUIET=1 -x COMMLENS_OUTPUT="$output/variant" "$program" "$iterations"
  else
    mpirun -np 1 -x LD_PRELOAD="$library" -x COMMLENS_MODE="$mode" -x COMMLENS_QUIET=1 \
      -x COMMLENS_OUTPUT="$output/$mode" "$program" "$iterations"
  fi
}
modes=(none summary trace ${OVERHEAD_VARIANTS:-})

declare -A values # "LABEL MODE" -> the runs' ns/call
labels=()
for ((i = 0; i < repeats; ++i)); do
  for mode in "${modes[@]}"; do
    while read -r label ns; do
      if [[ $mode == none && ! -v "values[$label none]" ]]; then labels+=("$label"); fi
      values["$label $mode"]+="$ns "
    done < <(run "$mode")
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
printf '%-30s %-22s %10s %10s\n' call variant "ns/call" "+ns"
for label in "${labels[@]}"; do
  base=$(median <<<"${values[$label none]}")
  for mode in "${modes[@]}"; do
    value=$(median <<<"${values[$label $mode]}")
    awk -v n="$label" -v m="$mode" -v b="$base" -v v="$value" \
      'BEGIN {printf "%-30s %-22s %10.1f %10.1f\n", n, m, v, v - b}'
  done
done
echo "(ns per call, median of $repeats interleaved runs of $iterations calls; baseline = same loop unprofiled)"
