#!/usr/bin/env bash
# Every GPU check of the runtime's bcast and reduce, given a CUDA build folder (builds nothing):
# the correctness program under ctest (runtime.trees: 2, 4 and 8 ranks, on and ab, blocking trees;
# runtime.trees_streams: segments on three streams per rank), the differential fuzzer over the
# collective sets that include bcast and reduce for FUZZ_SECONDS (300; 0 skips it; its `streams`
# mode runs them on three streams), the noise benchmark (bench/noise_trees.sh) and the streams
# benchmark (bench/tree_streams.sh: 1, 2 and 4 streams) on NOISE_RANKS ranks (4).
# usage: bash scripts/trees-gpu-checks.sh BUILD_DIR
set -uo pipefail
build=$(realpath "${1:?usage: trees-gpu-checks.sh BUILD_DIR}")
here=$(cd "$(dirname "$0")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
source "$here/scripts/gpu-check-steps.sh"
gpu_check_ctest "$build" trees '^runtime\.(trees|trees_streams|collective_tree|noise_schedule|tree_rules)$'
gpu_check_fuzz "$build" trees "bcast,reduce allreduce,bcast,reduce,p2p"
bash "$here/bench/noise_trees.sh" "$build" "${NOISE_RANKS:-4}" || status=1
bash "$here/bench/tree_streams.sh" "$build" "${NOISE_RANKS:-4}" || status=1
exit "$status"
