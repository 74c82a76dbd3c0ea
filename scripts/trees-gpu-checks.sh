#!/usr/bin/env bash
# Every GPU check of the runtime's bcast and reduce, given a CUDA build folder (builds nothing):
# the correctness program under ctest (runtime.trees: 2, 4 and 8 ranks, on and ab, blocking trees),
# the differential fuzzer over the collective sets that include bcast and reduce for FUZZ_SECONDS
# (300; 0 skips it), and the noise benchmark (bench/noise_trees.sh) on NOISE_RANKS ranks (4).
# usage: bash scripts/trees-gpu-checks.sh BUILD_DIR
set -uo pipefail
build=$(realpath "${1:?usage: trees-gpu-checks.sh BUILD_DIR}")
here=$(cd "$(dirname "$0")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
(cd "$build" && ctest -R '^runtime\.(trees|collective_tree|noise_schedule|tree_rules)$' --output-on-failure -V) \
  >"$build/trees-ctest.log" 2>&1 || status=1
grep -E "\[ +(OK|FAILED|SKIPPED) +\]|Failure|Expected|Which is|tests passed|tests failed" "$build/trees-ctest.log"
echo "full log: $build/trees-ctest.log"
if ((${FUZZ_SECONDS:-300} > 0)); then
  FUZZ_COLLECTIVES=${FUZZ_COLLECTIVES:-"bcast,reduce allreduce,bcast,reduce,p2p"} \
    bash "$here/scripts/runtime-fuzz.sh" "$build" "${FUZZ_SECONDS:-300}" >"$build/trees-fuzz.log" 2>&1 || status=1
  grep -vE "^runtime_fuzz: seed" "$build/trees-fuzz.log" | tail -30
  echo "full fuzz log: $build/trees-fuzz.log"
fi
bash "$here/bench/noise_trees.sh" "$build" "${NOISE_RANKS:-4}" || status=1
exit "$status"
