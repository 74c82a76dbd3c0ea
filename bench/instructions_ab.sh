#!/usr/bin/env bash
# Instructions per intercepted call of two libcommlens.so builds, counted by valgrind (callgrind):
# a figure the shared machine's load does not move, beside the timings of overhead_ab.sh. For each
# build it runs bench/call_overhead on one rank under the library and prints, per call, the
# instructions executed inside the MPI_Send and MPI_Test wrappers (PMPI included; the unprofiled
# program's PMPI_Send and PMPI_Test are counted as "none"), and in trace mode the writer thread's
# instructions per stored event (draining, encoding and storing the chunks; the kernel's share of
# writing them is not counted).
#   bench/instructions_ab.sh BUILD_DIR LIBRARY_A LIBRARY_B [ITERATIONS=100000]
# Environment: AB_MODE=summary|trace, AB_COLLECTORS=pmpi (a COMMLENS_COLLECTORS value).
set -euo pipefail
build=${1:?usage: instructions_ab.sh BUILD_DIR LIBRARY_A LIBRARY_B [ITERATIONS]}
library_a=${2:?library A}
library_b=${3:?library B}
iterations=${4:-100000}
mode=${AB_MODE:-summary}
collectors=${AB_COLLECTORS:-pmpi}
program="$build/bench/call_overhead"
command -v valgrind >/dev/null || { echo "instructions_ab.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
output=$(mktemp -d)
trap 'rm -rf "$output"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sends=$((iterations + iterations / 10)) # with call_overhead's warm-up
tests=$iterations

# count LIBRARY FUNCTION -> instructions executed inside FUNCTION (and what it calls), all threads
count() {
  local library=$1 function=$2 preload=()
  rm -rf "${output:?}"/*
  [[ $library != none ]] && preload=(-x LD_PRELOAD="$library")
  mpirun -np 1 "${preload[@]}" -x COMMLENS_MODE="$mode" -x COMMLENS_COLLECTORS="$collectors" \
    -x COMMLENS_MERGE=0 -x COMMLENS_QUIET=1 -x COMMLENS_OUTPUT="$output" \
    valgrind --tool=callgrind --toggle-collect="$function" --callgrind-out-file="$output/callgrind.%p" \
    "$program" "$iterations" single >/dev/null 2>&1
  cat "$output"/callgrind.* | awk '/^summary:/ {total += $2} END {print total + 0}'
}

printf '%-5s %22s %22s %22s\n' lib "MPI_Send instr/call" "MPI_Test instr/call" "writer instr/event"
for which in none A B; do
  library=none send_fn=PMPI_Send test_fn=PMPI_Test
  [[ $which == A ]] && library=$library_a
  [[ $which == B ]] && library=$library_b
  [[ $which != none ]] && send_fn=MPI_Send test_fn=MPI_Test
  send=$(count "$library" "$send_fn")
  test=$(count "$library" "$test_fn")
  writer=-
  if [[ $which != none && $mode == trace ]]; then
    writer=$(awk -v n="$(count "$library" 'commlens::WriterThread::store_ring*')" -v c=$((sends + tests)) \
      'BEGIN {printf "%.1f", n / c}')
  fi
  awk -v w="$which" -v s="$send" -v t="$test" -v sc=$sends -v tc=$tests -v wr="$writer" \
    'BEGIN {printf "%-5s %22.1f %22.1f %22s\n", w, s / sc, t / tc, wr}'
done
echo "(valgrind callgrind, $iterations calls of each, one rank, $mode mode, collectors $collectors; A = $library_a, B = $library_b)"
