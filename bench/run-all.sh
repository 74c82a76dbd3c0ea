#!/usr/bin/env bash
# Runs every benchmark against a build directory and prints their figures.
set -euo pipefail
build=${1:-build}
here=$(dirname "$0")
echo "== per-call overhead (bench/overhead.sh)"
bash "$here/overhead.sh" "$build"
echo "== per-call overhead of the NCCL wrappers (bench/overhead.sh with nccl_call_overhead)"
bash "$here/overhead.sh" "$build" 5 1000000 nccl_call_overhead
echo "== writer throughput (writer_throughput)"
"$build/bench/writer_throughput" 10000000 4 || true
echo "== MPI_T sampling overhead (bench/collector_latency.sh)"
bash "$here/collector_latency.sh" "$build"
echo "== CUDA collectors overhead (bench/cuda_overhead.sh; needs a GPU)"
[ -x "$build/bench/nvtx_range_cost" ] && "$build/bench/nvtx_range_cost" || true
[ -x "$build/bench/staged_copy_exchange" ] && bash "$here/cuda_overhead.sh" "$build" || true
echo "== one cudaMemcpyAsync under each way of recording copies (bench/copy_call_cost.sh; needs a GPU)"
[ -x "$build/bench/copy_call_cost" ] && bash "$here/copy_call_cost.sh" "$build" || true
echo "== the merge at 256 to 16,384 ranks, and MPI_Finalize at 256 ranks in 16 folders (bench/merge_scale.sh)"
bash "$here/merge_scale.sh" "$build"
echo "== commlens report over 10 million traced calls (report_10m)"
"$build/bench/report_10m" "$build/cli/commlens" "${TMPDIR:-/tmp}/commlens-report-10m.sqlite" || true
echo "== commlens-viewer open and first paint (bench/viewer_open.sh)"
[ -x "$build/viewer/commlens-viewer" ] && bash "$here/viewer_open.sh" "$build" || true
