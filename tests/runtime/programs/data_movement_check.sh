#!/usr/bin/env bash
# Runs data_movement_check traced under the runtime and checks its rows (data_movement_rows.py).
# usage: data_movement_check.sh BUILD_DIR RANKS MODE [LARGEST_COUNT]   (MODE: on, ab; dynamic: on
# with COMMLENS_RUNTIME_SELECT=dynamic, so every candidate runs where they differ; gpu_leader or
# staged: on with a tuning table whose one data_movement rule runs that algorithm for every call;
# resident: on under an MPS control daemon of its own, so that the calls up to 1 MiB a rank run on
# the resident kernel)
set -uo pipefail
build=$(realpath "$1")
ranks=$2
mode=$3
here=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
select=static
table=()
rows_mode=$mode
case $mode in
resident)
  # A daemon of this run's own (its pipes in $work), quit when the run ends.
  export CUDA_MPS_PIPE_DIRECTORY=$work/mps-pipe CUDA_MPS_LOG_DIRECTORY=$work/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if ! nvidia-cuda-mps-control -d 2>/dev/null; then
    echo "data_movement_check: skipped (no MPS control daemon: nvidia-cuda-mps-control -d failed)"
    exit 0
  fi
  trap 'echo quit | nvidia-cuda-mps-control; rm -rf "$work"' EXIT
  # Resident rules that let every collective take the kernel up to the halves' size, whatever
  # the shipped table's measured limits.
  rules=""
  for collective in allgather gather scatter alltoall reduce_scatter_block reduce_scatter; do
    rules+="${rules:+, }{\"collective\": \"$collective\", \"max_bytes\": 1048576}"
  done
  printf '{"format": 1, "rules": [{"algorithm": "one_shot"}], "resident": [%s]}\n' "$rules" >"$work/table.json"
  table=("COMMLENS_RUNTIME_RESIDENT_BYTES=1048576" "COMMLENS_RUNTIME_TUNING=$work/table.json")
  mode=on
  ;;
dynamic) mode=on select=dynamic ;;
gpu_leader | staged)
  printf '{"format": 1, "rules": [{"algorithm": "one_shot"}], "data_movement": [{"algorithm": "%s"}]}\n' \
    "$mode" >"$work/table.json"
  table=("COMMLENS_RUNTIME_TUNING=$work/table.json")
  mode=on
  ;;
esac
env "${table[@]}" COMMLENS_RUNTIME=$mode COMMLENS_RUNTIME_SELECT=$select COMMLENS_RUNTIME_COLLECTIVES=allgather,gather,scatter,alltoall,reduce_scatter_block,reduce_scatter \
  "$build/cli/commlens" run --mode trace --output "$work/trace" -- \
  mpirun -np "$ranks" --oversubscribe "$build/tests/runtime/programs/data_movement_check" ${4:-} >"$work/out" 2>&1
status=$?
cat "$work/out"
/usr/bin/python3 "$here/data_movement_rows.py" "$work/trace/commlens.sqlite" "$work/out" "$rows_mode" || status=1
exit "$status"
