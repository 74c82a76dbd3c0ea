#!/usr/bin/env bash
# Overlap of nonblocking collectives with computation: bench/runtime_nonblocking.cu posts CALLS
# calls of one collective on device buffers, runs a COMPUTE_US kernel on a stream of its own, and
# waits, for MPI_Iallreduce, MPI_Ibcast, MPI_Iallgather and MPI_Ireduce_scatter_block at each size
# (allgather and reduce-scatter: BYTES is the whole buffer, a block is BYTES / ranks) and checks
# the last iteration's results (a wrong one fails the run). Two jobs per rank count, one table:
# the runtime's nonblocking collectives (COMMLENS_RUNTIME_COLLECTIVES names iallreduce, ibcast,
# iallgather and ireduce_scatter: a lane thread runs the calls while the kernel runs) and the
# baseline (the same runtime with the blocking collectives only: the wrappers' host staging,
# which MPI progresses only inside the wait). Columns: ms per iteration (median of the slowest
# rank) of the calls alone, the kernel alone and both overlapped; hidden: the share of the shorter
# one the overlap hid ((comm + compute - overlapped) / min(comm, compute)); speedup: baseline
# overlapped / runtime overlapped; comm x: baseline calls alone / runtime calls alone. Large sizes
# run fewer calls (at most 256 MiB an iteration) and fewer iterations (at least 3): columns
# calls and iters.
# usage: [COLLECTIVE=NAME[,NAME...]] [SIZES="BYTES..."] [ITERATIONS=20] [CALLS=8] [COMPUTE_US=2000]
#        bench/runtime_nonblocking.sh BUILD_DIR [RANKS...]
#   COLLECTIVE: iallreduce, ibcast, iallgather, ireduce_scatter (default: all four); RANKS: 2 4 8;
#   SIZES: 8 B, then 256 B to 256 MiB by x16.
set -euo pipefail
build=${1:?usage: runtime_nonblocking.sh BUILD_DIR [RANKS...]}
shift
rank_counts=("$@")
((${#rank_counts[@]} > 0)) || rank_counts=(2 4 8)
read -r -a sizes <<<"${SIZES:-8 256 4096 65536 1048576 16777216 268435456}"
iterations=${ITERATIONS:-20}
calls=${CALLS:-8}
compute_us=${COMPUTE_US:-2000}
IFS=, read -r -a collectives <<<"${COLLECTIVE:-iallreduce,ibcast,iallgather,ireduce_scatter}"
# The baseline keeps each collective's blocking twin on the runtime, as the runtime side does.
blocking=()
for collective in "${collectives[@]}"; do
  case $collective in
    iallreduce) blocking+=(allreduce) ;;
    ibcast) blocking+=(bcast) ;;
    iallgather) blocking+=(allgather) ;;
    ireduce_scatter) blocking+=(reduce_scatter_block) ;;
    *) echo "runtime_nonblocking.sh: unknown collective '$collective'" >&2 && exit 2 ;;
  esac
done
blocking_list=$(IFS=, && echo "${blocking[*]}")
nonblocking_list=$(IFS=, && echo "${collectives[*]}")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ranks in "${rank_counts[@]}"; do
  for side in runtime baseline; do
    named=$blocking_list
    [[ $side == runtime ]] && named=$blocking_list,$nonblocking_list
    if ! COMMLENS_RUNTIME=on COMMLENS_RUNTIME_COLLECTIVES=$named \
      "$build/cli/commlens" run --mode summary --output "$out/$side-$ranks" -- \
      mpirun -np "$ranks" --oversubscribe "$build/bench/runtime_nonblocking" "$nonblocking_list" \
      "$iterations" "$calls" "$compute_us" "${sizes[@]}" >"$out/$side.log"; then
      grep '^runtime_nonblocking:' "$out/$side.log" >&2 || true
      echo "runtime_nonblocking.sh: the $side job at $ranks ranks failed: a wrong result or an error, reported above" >&2
      exit 1
    fi
    grep '^runtime_nonblocking:' "$out/$side.log" >"$out/$side.txt"
  done
  echo "runtime_nonblocking: $ranks ranks, calls of BYTES each per iteration (allgather, reduce-scatter: the whole buffer), ${compute_us} us kernel, results checked"
  printf '%-15s %10s %5s %5s | %9s %9s %9s %6s | %9s %9s %9s %6s | %7s %7s\n' collective bytes calls iters \
    comm compute overlap hidden comm compute overlap hidden speedup 'comm x'
  printf '%-38s | %-36s | %-36s |\n' "" runtime "baseline (host staged)"
  # Lines: "runtime_nonblocking: collective NAME bytes B calls N iterations I compute_ms K comm_ms C
  # overlapped_ms T", in the same order in both files.
  paste -d' ' "$out/runtime.txt" "$out/baseline.txt" |
    awk 'function hidden(c, k, t) { m = c < k ? c : k; return m > 0 ? (c + k - t) / m : 0 }
         function ratio(a, b) { return b > 0 ? a / b : 0 }
         $3 != $18 || $5 != $20 { print "runtime_nonblocking.sh: the two jobs measured different cases" > "/dev/stderr"; exit 1 }
         { rk = $11; rc = $13; rt = $15; bk = $26; bc = $28; bt = $30
           printf "%-15s %10d %5d %5d | %9.3f %9.3f %9.3f %6.2f | %9.3f %9.3f %9.3f %6.2f | %7.2f %7.2f\n",
                  $3, $5, $7, $9, rc, rk, rt, hidden(rc, rk, rt), bc, bk, bt, hidden(bc, bk, bt),
                  ratio(bt, rt), ratio(bc, rc) }'
  echo
done
