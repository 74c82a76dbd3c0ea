#!/usr/bin/env bash
# The first MPI_Allreduce (or with OPERATION p2p, the first device message between a rank pair) on
# fresh device buffers (tests/runtime/programs/first_use_check): the runtime waiting for the peers' CUDA IPC
# opens (COMMLENS_RUNTIME_BACKGROUND_OPENS=0) against the host path while they open in the
# background (=1), alternated ROUNDS times; prints per size the median first-call and second-call
# times of each and the first call's ratio.
# usage: bench/runtime_first_use.sh BUILD_DIR [RANKS=4] [ROUNDS=3] [SIZES="64 65536 1048576 16777216"]
#        [OPERATION=allreduce|p2p]
set -euo pipefail
build=${1:?usage: runtime_first_use.sh BUILD_DIR [RANKS] [ROUNDS] [SIZES] [OPERATION]}
ranks=${2:-4}
rounds=${3:-3}
sizes=${4:-64 65536 1048576 16777216}
operation=${5:-allreduce}
case $operation in
  allreduce) program_operation=() collectives=allreduce ;;
  p2p) program_operation=(p2p) collectives=allreduce,p2p ;;
  *) echo "runtime_first_use.sh: OPERATION must be allreduce or p2p, not '$operation'" >&2; exit 2 ;;
esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
library=$(realpath "$build/collectors/pmpi/libcommlens.so")
program=$(realpath "$build/tests/runtime/programs/first_use_check")

run() { # BACKGROUND -> "bytes first_us second_us" lines
  COMMLENS_RUNTIME=on COMMLENS_RUNTIME_COLLECTIVES=$collectives COMMLENS_RUNTIME_BACKGROUND_OPENS=$1 \
    COMMLENS_OUTPUT="$out/$1" COMMLENS_QUIET=1 \
    mpirun -np "$ranks" --oversubscribe -x LD_PRELOAD="$library" -x COMMLENS_RUNTIME -x COMMLENS_RUNTIME_COLLECTIVES \
    -x COMMLENS_RUNTIME_BACKGROUND_OPENS -x COMMLENS_OUTPUT -x COMMLENS_QUIET "$program" "${program_operation[@]}" $sizes |
    awk '/^bytes/ {print $2, $4, $6}'
}
for ((round = 0; round < rounds; ++round)); do
  run 0 >>"$out/wait.txt"
  run 1 >>"$out/background.txt"
done
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
printf '%12s %14s %14s %16s %16s %8s\n' bytes wait_first_us wait_second_us background_first background_second ratio
for bytes in $sizes; do
  wf=$(awk -v b="$bytes" '$1 == b {print $2}' "$out/wait.txt" | median)
  ws=$(awk -v b="$bytes" '$1 == b {print $3}' "$out/wait.txt" | median)
  bf=$(awk -v b="$bytes" '$1 == b {print $2}' "$out/background.txt" | median)
  bs=$(awk -v b="$bytes" '$1 == b {print $3}' "$out/background.txt" | median)
  awk -v b="$bytes" -v wf="$wf" -v ws="$ws" -v bf="$bf" -v bs="$bs" \
    'BEGIN {printf "%12d %14.1f %14.1f %16.1f %16.1f %7.1fx\n", b, wf, ws, bf, bs, wf / bf}'
done
echo "($operation; medians of $rounds runs each, $ranks ranks; ratio = first call waiting for the opens / first call on the host path)"
