#!/usr/bin/env bash
# Overlap of nonblocking allreduces with computation: bench/runtime_nonblocking.cu posts CALLS
# MPI_Iallreduce calls on device buffers, runs a COMPUTE_US kernel on a stream of its own, and
# waits. Two jobs, one table: the runtime's nonblocking collectives (COMMLENS_RUNTIME_COLLECTIVES
# names iallreduce: a lane thread runs the calls while the kernel runs) and the baseline (the
# same runtime without iallreduce: the wrappers' host staging, which MPI progresses only inside
# the wait). Columns: ms per iteration (median of the slowest rank) of the calls alone, the kernel
# alone and both overlapped; hidden: the share of the shorter one the overlap hid
# ((comm + compute - overlapped) / min(comm, compute)); speedup: baseline overlapped / runtime overlapped.
# COLLECTIVE=ibcast measures MPI_Ibcast instead (the runtime side names bcast,ibcast: the bcast
# tree on a lane; the baseline names bcast only).
# usage: [COLLECTIVE=iallreduce|ibcast] bench/runtime_nonblocking.sh BUILD_DIR [RANKS [ITERATIONS [CALLS [COMPUTE_US [BYTES...]]]]]
set -euo pipefail
build=${1:?usage: runtime_nonblocking.sh BUILD_DIR [RANKS [ITERATIONS [CALLS [COMPUTE_US [BYTES...]]]]]}
ranks=${2:-4}
iterations=${3:-50}
calls=${4:-8}
compute_us=${5:-2000}
shift $(($# < 5 ? $# : 5))
sizes=("$@")
((${#sizes[@]} > 0)) || sizes=(65536 1048576 16777216)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
collective=${COLLECTIVE:-iallreduce}
blocking=allreduce
[[ $collective == ibcast ]] && blocking=bcast
for side in runtime baseline; do
  collectives=$blocking
  [[ $side == runtime ]] && collectives=$blocking,$collective
  COMMLENS_RUNTIME=on COMMLENS_RUNTIME_COLLECTIVES=$collectives \
    "$build/cli/commlens" run --mode summary --output "$out/$side" -- \
    mpirun -np "$ranks" --oversubscribe "$build/bench/runtime_nonblocking" "--collective=$collective" \
    "$iterations" "$calls" "$compute_us" "${sizes[@]}" | grep '^runtime_nonblocking:' >"$out/$side.txt"
done
echo "runtime_nonblocking: $collective, $ranks ranks, $calls calls of BYTES each per iteration, ${compute_us} us kernel, $iterations iterations"
printf '%10s | %9s %9s %9s %7s | %9s %9s %9s %7s | %7s\n' bytes comm compute overlap hidden \
  comm compute overlap hidden speedup
printf '%10s | %-38s | %-38s |\n' "" "runtime ($collective)" "baseline (host staged)"
# Lines: "runtime_nonblocking: bytes B calls N compute_ms K comm_ms C overlapped_ms T", same order in both.
paste -d' ' "$out/runtime.txt" "$out/baseline.txt" |
  awk 'function hidden(c, k, t) { m = c < k ? c : k; return m > 0 ? (c + k - t) / m : 0 }
       { b = $3; rk = $7; rc = $9; rt = $11; bk = $18; bc = $20; bt = $22
         printf "%10d | %9.3f %9.3f %9.3f %7.2f | %9.3f %9.3f %9.3f %7.2f | %7.2f\n", b, rc, rk, rt, hidden(rc, rk, rt),
                bc, bk, bt, hidden(bc, bk, bt), bt / rt }'
