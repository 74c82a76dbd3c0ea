#!/usr/bin/env bash
# Where the GPU runtime's small-message floor goes, from commlens' own trace: device-buffer
# allreduce, bcast, allgather, gather and scatter at small sizes (bench/runtime_floor.cpp) in one
# COMMLENS_RUNTIME=ab run per rank count (runtime and host-staged baseline alternating per call),
# traced with the CUDA collectors on; then bench/runtime_floor.py splits each rank's calls into the
# time before the first GPU operation, GPU time, gaps, and the wait after the last one, beside the
# runtime's own host phases (runtime_ops: publish, agreement, IPC lookups, barriers) and the
# baseline's calls. Ranks share the machine's GPUs (rank r on GPU r modulo their count).
# usage: bench/runtime_floor.sh BUILD_DIR [ITERATIONS] [RANKS...]   (default 20 calls a turn, 2 4 8 ranks)
# FLOOR_BYTES sets the sizes (default "8 65536").
set -euo pipefail
build=${1:?usage: runtime_floor.sh BUILD_DIR [ITERATIONS] [RANKS...]}
iterations=${2:-20}
shift $(($# < 2 ? $# : 2))
sizes=${FLOOR_BYTES:-8 65536}
here=$(cd "$(dirname "$0")" && pwd)
python=$(command -v /usr/bin/python3 || command -v python3)
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Whether ranks sharing a GPU run their kernels concurrently (MPS) or in time slices changes the
# floor entirely: say which.
mps="not running"
if pgrep -f nvidia-cuda-mps-control >/dev/null 2>&1; then
  mps="running"
fi
for ranks in ${@:-2 4 8}; do
  out=$(mktemp -d)
  echo "== $ranks ranks, sizes $sizes, MPS control daemon $mps"
  # Steady state: the handles open in the first call of each turn (left out by --skip 1), not in
  # the background while the host path takes the call.
  COMMLENS_RUNTIME=ab COMMLENS_RUNTIME_BACKGROUND_OPENS=0 COMMLENS_COLLECTORS=all \
    COMMLENS_RUNTIME_COLLECTIVES=allreduce,bcast,allgather,gather,scatter \
    "$build/cli/commlens" run --output "$out" --mode trace -- \
    mpirun -np "$ranks" --oversubscribe "$build/bench/runtime_floor" "$iterations" $sizes
  "$python" "$here/runtime_floor.py" "$out/commlens.sqlite"
  echo "database: $out/commlens.sqlite"
done
