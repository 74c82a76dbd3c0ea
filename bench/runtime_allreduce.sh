#!/usr/bin/env bash
# The GPU runtime's allreduce against its baseline and NCCL on one node, in one run under
# COMMLENS_RUNTIME=ab, then the same comparison from the trace (`commlens compare`). With more
# ranks than GPUs the ranks share GPUs (rank r on GPU r % GPUs) and NCCL, which refuses that, is
# left out.
# usage: bench/runtime_allreduce.sh BUILD_DIR [RANKS] [ITERATIONS] [MAX_BYTES] [in-place]
set -euo pipefail
build=${1:?usage: runtime_allreduce.sh BUILD_DIR [RANKS] [ITERATIONS] [MAX_BYTES]}
ranks=${2:-2}
iterations=${3:-20}
max_bytes=${4:-1073741824}
placement=${5:-}
out=$(mktemp -d)
# NVLink multicast (NVLS) stays off: the GPU hosts these figures come from forbid it.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Steady state (first uses: bench/runtime_first_use.sh): the buffers are allocated once, and the
# first sizes' runtime turns would otherwise go to the host path while the handles open.
COMMLENS_RUNTIME=ab COMMLENS_RUNTIME_BACKGROUND_OPENS=0 "$build/cli/commlens" run --output "$out" --mode trace -- \
  mpirun -np "$ranks" --oversubscribe "$build/bench/runtime_allreduce" "$iterations" "$max_bytes" $placement
# One table per runtime algorithm that ran (which ran depends on size, ranks and placement:
# docs/runtime.md).
for algorithm in one_shot two_shot one_shot_striped shared_gpu hierarchical; do
  "$build/cli/commlens" compare "$out/commlens.sqlite" --implementations "mpi:host_staged,runtime:$algorithm" \
    2>/dev/null || echo "(no runtime:$algorithm calls in this run)"
done
echo "database: $out/commlens.sqlite"
