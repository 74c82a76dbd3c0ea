#!/usr/bin/env bash
# The runtime's event-driven bcast and reduce trees on device buffers against host staging, 8 B to
# 256 MiB, in one COMMLENS_RUNTIME=ab run per rank count (the runtime takes every even call, the
# host-staged baseline every odd one; bench/noise_trees.cpp, no noise injected), 2, 4 and 8 ranks
# sharing the machine's GPUs (rank r on GPU r modulo their count).
# usage: bench/runtime_trees.sh BUILD_DIR [ITERATIONS] [RANKS...]
# SIZES="8 64 ..." overrides the sizes (bytes); the tree settings are the tuning table's
# (COMMLENS_RUNTIME_TUNING, else the shipped table for the GPU).
set -euo pipefail
build=${1:?usage: runtime_trees.sh BUILD_DIR [ITERATIONS] [RANKS...]}
iterations=${2:-10}
shift $(($# < 2 ? $# : 2))
read -r -a sizes <<<"${SIZES:-8 64 512 4096 65536 262144 1048576 4194304 16777216 67108864 268435456}"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "runtime_trees: $iterations calls per half (ms per call, slowest rank; x = baseline / runtime)"
printf '%-6s %-7s %10s %10s %10s %8s\n' ranks op bytes runtime staged x
for ranks in ${@:-2 4 8}; do
  COMMLENS_RUNTIME=ab COMMLENS_RUNTIME_COLLECTIVES=bcast,reduce \
    "$build/cli/commlens" run --mode summary --output "$out/$ranks" -- \
    mpirun -np "$ranks" --oversubscribe "$build/bench/noise_trees" "$iterations" "${sizes[@]}" |
    awk -v ranks="$ranks" '/^noise_trees:/ { printf "%-6d %-7s %10d %10.4f %10.4f %8.2f\n", ranks, $2, $4, $6, $8, $8 / $6 }'
  # Which tree each size ran (rank 0's rows): a size the runtime declined shows no row.
  sqlite3 "$out/$ranks/commlens.sqlite" "SELECT f.name, r.algorithm, min(r.bytes), max(r.bytes), count(*)
    FROM runtime_ops r JOIN functions f ON f.id = r.function_id WHERE r.rank = 0 GROUP BY 1, 2" 2>/dev/null || true
done
