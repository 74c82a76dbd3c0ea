#!/usr/bin/env bash
# The NCCL collector's GPU checks on a machine with one GPU or more, given a build folder made with
# the CUDA collectors (scripts/gpu-tests.sh makes one; configure with
# -DCOMMLENS_TEST_PYTHON="$(command -v python3)" so that the DDP check uses the Python with torch):
#   - ctest cuda.copy_paths -R NcclExample: examples/cuda/nccl_allreduce on one GPU (fields,
#     kernels tied to their calls); with two GPUs also the two-rank NCCL test in it;
#   - ctest cuda.ddp_buckets: PyTorch DDP, world size 1, no MPI (tests/nccl/ddp_buckets_check.py);
#   - bench/overhead.sh against the real NCCL (nccl_call_overhead_real): host ns per call without
#     the profiler, in summary and in trace mode.
# Usage: bash scripts/nccl-gpu-checks.sh BUILD_DIR [REPEATS=5] [ITERATIONS=20000]
set -euo pipefail
build=${1:?usage: nccl-gpu-checks.sh BUILD_DIR [REPEATS] [ITERATIONS]}
repeats=${2:-5}
iterations=${3:-20000}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
(cd "$build" && ctest -R 'cuda\.(copy_paths|ddp_buckets)' -V >ctest-nccl.log 2>&1) || status=$?
grep -E "NcclExample|NcclAllreduce|ddp_buckets_check|nccl_allreduce one rank|\[ +(OK|FAILED|SKIPPED) +\] .*Nccl|Failure|Expected|Which is|tests passed|tests failed|Skipped" \
  "$build/ctest-nccl.log" || true
echo "full log: $build/ctest-nccl.log"
if [[ -x "$build/bench/nccl_call_overhead_real" ]]; then
  # Without the CUDA collector too: its launch callbacks are a cost of every kernel launch, not of
  # the NCCL wrappers.
  OVERHEAD_VARIANTS=${OVERHEAD_VARIANTS-"summary/pmpi,mpit,nvtx trace/pmpi,mpit,nvtx"} \
    bash "$(dirname "$0")/../bench/overhead.sh" "$build" "$repeats" "$iterations" nccl_call_overhead_real || status=1
else
  echo "nccl_call_overhead_real not built (nccl.h or libnccl not found at configure time)"
fi
exit "$status"
