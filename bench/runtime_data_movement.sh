#!/usr/bin/env bash
# The data-movement collectives on device buffers, the runtime against host staging in one run per
# rank count (COMMLENS_RUNTIME=ab; bench/runtime_data_movement.cpp says how the turns are told
# apart), 2, 4 and 8 ranks sharing the machine's GPUs (rank r on GPU r modulo their count).
# usage: bench/runtime_data_movement.sh BUILD_DIR [ITERATIONS] [MIN_BYTES] [MAX_BYTES] [RANKS...]
# ALGORITHM=direct|gpu_leader|staged: the runtime's turns run that algorithm for every call (a
# one-rule tuning table); unset: the table COMMLENS_RUNTIME_TUNING names, or the shipped one.
set -euo pipefail
build=${1:?usage: runtime_data_movement.sh BUILD_DIR [ITERATIONS] [MIN_BYTES] [MAX_BYTES] [RANKS...]}
iterations=${2:-20}
min_bytes=${3:-8}
max_bytes=${4:-268435456}
shift $(($# < 4 ? $# : 4))
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [[ -n ${ALGORITHM:-} ]]; then
  table=$(mktemp --suffix .json)
  trap 'rm -f "$table"' EXIT
  printf '{"format": 1, "rules": [{"algorithm": "one_shot"}], "data_movement": [{"algorithm": "%s"}]}\n' \
    "$ALGORITHM" >"$table"
  export COMMLENS_RUNTIME_TUNING=$table
  echo "every data-movement call of the runtime's turns: $ALGORITHM"
fi
for ranks in ${@:-2 4 8}; do
  out=$(mktemp -d)
  COMMLENS_RUNTIME=ab COMMLENS_RUNTIME_COLLECTIVES=allgather,gather,scatter,alltoall,reduce_scatter_block \
    "$build/cli/commlens" run --output "$out" -- \
    mpirun -np "$ranks" --oversubscribe "$build/bench/runtime_data_movement" "$iterations" "$min_bytes" "$max_bytes"
  echo "database: $out/commlens.sqlite"
  sqlite3 "$out/commlens.sqlite" "SELECT f.name, decision, algorithm, count(*) FROM runtime_ops r
    JOIN functions f ON f.id = r.function_id WHERE r.rank = 0 GROUP BY 1, 2, 3" 2>/dev/null || true
done
