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
# In trace mode a last column splits the added time: how long rank 0's loop waited for the writer
# thread to free buffer space (profiler_overhead 'trace_wait'), per call; the rest is the call's
# own recording.
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

iterations=2000000
calls=$((iterations + iterations / 10 + iterations)) # sends, their warm-up, tests

run() { # run none|A|B -> "send_ns test_ns wait_ns_per_call"
  local library=$1 times
  if [[ $library == none ]]; then
    times=$(mpirun -np "$ranks" --oversubscribe "$program" "$iterations" "$level" | awk '{print $2}' | paste -sd' ')
    echo "$times 0"
    return
  fi
  rm -rf "${output:?}"/*
  times=$(mpirun -np "$ranks" --oversubscribe -x LD_PRELOAD="$library" -x COMMLENS_MODE="$mode" \
    -x COMMLENS_COLLECTORS="$collectors" -x COMMLENS_MERGE=0 -x COMMLENS_QUIET=1 -x COMMLENS_OUTPUT="$output" \
    "$program" "$iterations" "$level" | awk '{print $2}' | paste -sd' ')
  local waited=0
  if [[ $mode == trace ]]; then
    waited=$(sqlite3 "$output/rank-00000.sqlite" \
      "SELECT coalesce(sum(time_ns), 0) / $calls.0 FROM profiler_overhead WHERE component = 'trace_wait'")
  fi
  echo "$times $waited"
}

declare -A sends tests waits
for ((i = 0; i < repeats; ++i)); do
  for which in none A B; do
    library=none
    [[ $which == A ]] && library=$library_a
    [[ $which == B ]] && library=$library_b
    read -r send test waited < <(run "$library")
    sends[$which]+="$send "
    tests[$which]+="$test "
    waits[$which]+="$waited "
  done
done

stat() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {printf "%.1f %.1f\n", v[int((NR+1)/2)], v[1]}'; }
printf '%-24s %-4s %10s %10s %10s %12s\n' call lib "median ns" "min ns" "median +ns" "waited ns"
for call in send test; do
  declare -n values=${call}s
  read -r base_median _ < <(stat <<<"${values[none]}")
  name=$([[ $call == send ]] && echo "MPI_Send(PROC_NULL)" || echo "MPI_Test(REQUEST_NULL)")
  for which in none A B; do
    read -r median minimum < <(stat <<<"${values[$which]}")
    read -r waited _ < <(stat <<<"${waits[$which]}")
    awk -v n="$name" -v w="$which" -v m="$median" -v lo="$minimum" -v b="$base_median" -v q="$waited" \
      'BEGIN {printf "%-24s %-4s %10.1f %10.1f %10.1f %12.1f\n", n, w, m, lo, m - b, q}'
  done
done
echo "(waited ns: median over the runs of rank 0's time waiting for the writer, per call of its loop)"
echo "($repeats interleaved runs of 2,000,000 calls, MPI_THREAD_${level^^}, $mode mode, collectors $collectors, $ranks rank(s); A = $library_a, B = $library_b)"
