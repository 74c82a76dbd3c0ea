#!/usr/bin/env bash
# Added cost per intercepted MPI call of two libcommlens.so builds (summary mode, PMPI collector
# only, one rank, unless the variables below say otherwise), interleaved over REPEATS runs with the
# same loop unprofiled; prints medians and minima (rank 0's loop).
# LEVEL `multiple` runs the loop under MPI_THREAD_MULTIPLE, where the profiler counts the threads
# inside MPI with a locked instruction.
#   bench/overhead_ab.sh BUILD_DIR LIBRARY_A LIBRARY_B [REPEATS=15] [LEVEL=single|multiple]
# Environment: AB_MODE=summary|trace, AB_COLLECTORS=pmpi (a COMMLENS_COLLECTORS value), AB_RANKS=1
# (every rank runs the loop at once; with 2 on this 2-core machine the writers share the cores).
# The merge at MPI_Finalize is off (COMMLENS_MERGE=0): it runs after the loop and is not timed.
set -euo pipefail
build=${1:?usage: overhead_ab.sh BUILD_DIR LIBRARY_A LIBRARY_B [REPEATS] [LEVEL]}
library_a=${2:?library A}
library_b=${3:?library B}
repeats=${4:-15}
level=${5:-single}
mode=${AB_MODE:-summary}
collectors=${AB_COLLECTORS:-pmpi}
ranks=${AB_RANKS:-1}
program="$build/bench/call_overhead"
output=$(mktemp -d)
trap 'rm -rf "$output"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run() { # run none|A|B -> "send_ns test_ns"
  local library=$1
  if [[ $library == none ]]; then
    mpirun -np "$ranks" --oversubscribe "$program" 2000000 "$level"
  else
    rm -rf "${output:?}"/*
    mpirun -np "$ranks" --oversubscribe -x LD_PRELOAD="$library" -x COMMLENS_MODE="$mode" \
      -x COMMLENS_COLLECTORS="$collectors" -x COMMLENS_MERGE=0 -x COMMLENS_QUIET=1 -x COMMLENS_OUTPUT="$output" \
      "$program" 2000000 "$level"
  fi | awk '{print $2}' | paste -sd' '
}

declare -A sends tests
for ((i = 0; i < repeats; ++i)); do
  for which in none A B; do
    library=none
    [[ $which == A ]] && library=$library_a
    [[ $which == B ]] && library=$library_b
    read -r send test < <(run "$library")
    sends[$which]+="$send "
    tests[$which]+="$test "
  done
done

stat() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {printf "%.1f %.1f\n", v[int((NR+1)/2)], v[1]}'; }
printf '%-24s %-4s %10s %10s %10s\n' call lib "median ns" "min ns" "median +ns"
for call in send test; do
  declare -n values=${call}s
  read -r base_median _ < <(stat <<<"${values[none]}")
  name=$([[ $call == send ]] && echo "MPI_Send(PROC_NULL)" || echo "MPI_Test(REQUEST_NULL)")
  for which in none A B; do
    read -r median minimum < <(stat <<<"${values[$which]}")
    awk -v n="$name" -v w="$which" -v m="$median" -v lo="$minimum" -v b="$base_median" \
      'BEGIN {printf "%-24s %-4s %10.1f %10.1f %10.1f\n", n, w, m, lo, m - b}'
  done
done
echo "($repeats interleaved runs of 2,000,000 calls, MPI_THREAD_${level^^}, $mode mode, collectors $collectors, $ranks rank(s); A = $library_a, B = $library_b)"
