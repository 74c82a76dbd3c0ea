#!/usr/bin/env bash
# The GPU runtime's allreduce, allgather, reduce-scatter, bcast and reduce against their baseline
# (host staging) and NCCL on one node, in one run under COMMLENS_RUNTIME=ab
# (bench/runtime_collectives.cpp), then the same comparison from the trace (`commlens compare`, one
# table per runtime algorithm that ran). With more ranks than GPUs the ranks share GPUs (rank r on
# GPU r % GPUs) and NCCL, which refuses that, is left out.
# usage: bench/runtime_collectives.sh BUILD_DIR [RANKS=2] [ITERATIONS=20] [MAX_BYTES=1073741824]
#          [COLLECTIVE... (all five)] [in-place (allreduce)]
set -euo pipefail
build=${1:?usage: runtime_collectives.sh BUILD_DIR [RANKS] [ITERATIONS] [MAX_BYTES] [COLLECTIVE...] [in-place]}
ranks=${2:-2}
iterations=${3:-20}
max_bytes=${4:-1073741824}
shift $(($# < 4 ? $# : 4))
out=$(mktemp -d)
# NVLink multicast (NVLS) stays off: the GPU hosts these figures come from forbid it.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Steady state (first uses: bench/runtime_first_use.sh): the buffers are allocated once, and the
# first sizes' runtime turns would otherwise go to the host path while the handles open.
COMMLENS_RUNTIME=ab COMMLENS_RUNTIME_BACKGROUND_OPENS=0 "$build/cli/commlens" run --output "$out" --mode trace -- \
  mpirun -np "$ranks" --oversubscribe "$build/bench/runtime_collectives" "$iterations" "$max_bytes" "$@"
# One table per runtime algorithm that ran (which ran depends on collective, size, ranks and
# placement: docs/runtime.md).
algorithms=$(python3 - "$out/commlens.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(" ".join(name for (name,) in db.execute(
    "SELECT DISTINCT i.name FROM mpi_calls c JOIN implementations i ON i.id = c.implementation "
    "WHERE i.name LIKE 'runtime:%' ORDER BY 1")))
PY
)
for algorithm in $algorithms; do
  "$build/cli/commlens" compare "$out/commlens.sqlite" --implementations "mpi:host_staged,$algorithm" ||
    echo "(no comparison for $algorithm)"
done
echo "database: $out/commlens.sqlite"
