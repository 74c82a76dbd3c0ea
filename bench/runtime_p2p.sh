#!/usr/bin/env bash
# Device-buffer point-to-point through the runtime against host staging and a raw CUDA IPC copy,
# in one run under COMMLENS_RUNTIME=ab (bench/runtime_p2p.cpp says how the two are told apart).
# Two ranks: on two GPUs when the machine has them, else sharing one.
# usage: bench/runtime_p2p.sh BUILD_DIR [ITERATIONS] [MAX_BYTES]
set -euo pipefail
build=${1:?usage: runtime_p2p.sh BUILD_DIR [ITERATIONS] [MAX_BYTES]}
iterations=${2:-10}
max_bytes=${3:-1073741824}
out=$(mktemp -d)
# NVLink multicast (NVLS) stays off: the GPU hosts these figures come from forbid it.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
COMMLENS_RUNTIME=ab COMMLENS_RUNTIME_COLLECTIVES=allreduce,p2p "$build/cli/commlens" run --output "$out" -- \
  mpirun -np 2 --oversubscribe "$build/bench/runtime_p2p" "$iterations" "$max_bytes"
echo "database: $out/commlens.sqlite"
