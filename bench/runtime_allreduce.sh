#!/usr/bin/env bash
# The GPU runtime's allreduce against its baseline and NCCL on one node, in one run under
# COMMLENS_RUNTIME=ab, then the same comparison from the trace: bench/runtime_collectives.sh with
# the allreduce alone.
# usage: bench/runtime_allreduce.sh BUILD_DIR [RANKS] [ITERATIONS] [MAX_BYTES] [in-place]
set -euo pipefail
build=${1:?usage: runtime_allreduce.sh BUILD_DIR [RANKS] [ITERATIONS] [MAX_BYTES] [in-place]}
exec bash "$(dirname "$0")/runtime_collectives.sh" "$build" "${2:-2}" "${3:-20}" "${4:-1073741824}" allreduce ${5:-}
