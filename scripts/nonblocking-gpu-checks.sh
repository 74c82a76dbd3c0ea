#!/usr/bin/env bash
# Every GPU check of the runtime's nonblocking collectives, given a CUDA build folder (builds
# nothing): the correctness programs under ctest (runtime.nonblocking: MPI_Iallreduce;
# runtime.nonblocking_collectives: MPI_Iallgather, MPI_Ireduce_scatter_block, MPI_Ireduce_scatter
# and MPI_Ibcast; 2, 4 and 8 ranks, on and ab) with the host-only tests of lanes and request
# states, the differential fuzzer over the nonblocking collective sets for FUZZ_SECONDS (300; 0
# skips it), and the overlap benchmark (bench/runtime_nonblocking.sh) for MPI_Iallreduce and
# MPI_Ibcast on BENCH_RANKS ranks (4).
# usage: bash scripts/nonblocking-gpu-checks.sh BUILD_DIR
set -uo pipefail
build=$(realpath "${1:?usage: nonblocking-gpu-checks.sh BUILD_DIR}")
here=$(cd "$(dirname "$0")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
source "$here/scripts/gpu-check-steps.sh"
gpu_check_ctest "$build" nonblocking '^runtime\.(nonblocking|nonblocking_collectives|ordered_lanes|request_states)$'
gpu_check_fuzz "$build" nonblocking \
  "iallreduce,iallgather,ireduce_scatter,ibcast allreduce,allgather,reduce_scatter_block,iallreduce,iallgather,ireduce_scatter,ibcast,bcast,reduce,p2p"
COLLECTIVE=iallreduce,ibcast ITERATIONS=20 CALLS=8 COMPUTE_US=2000 SIZES="65536 1048576 16777216" \
  bash "$here/bench/runtime_nonblocking.sh" "$build" "${BENCH_RANKS:-4}" || status=1
exit "$status"
