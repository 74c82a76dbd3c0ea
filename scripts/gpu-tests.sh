#!/usr/bin/env bash
# Builds commlens with the CUDA collectors and runs every GPU test (ctest label `cuda`) in one go,
# then prints what each GPU program stored per rank and copy path, then runs the runtime's
# differential fuzzer (scripts/runtime-fuzz.sh) for FUZZ_SECONDS (600; 0 skips it) over 2, 4 and 8
# ranks. For a machine with GPUs (CI has none, and there these tests skip).
# Usage: bash scripts/gpu-tests.sh [BUILD_DIR [CMAKE_ARGS...]]
set -euo pipefail
build=${1:-build-gpu}
shift || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 # Open MPI refuses root otherwise

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOMMLENS_WITH_CUDA=ON \
  -DCOMMLENS_WITH_VIEWER=OFF -DCOMMLENS_TEST_PYTHON="$(command -v python3)" "$@"
cmake --build "$build" -j "$(nproc)"
status=0
(cd "$build" && ctest -L cuda -V >ctest-cuda.log 2>&1) || status=$?
grep -E "^[0-9]+: (\[ +(OK|FAILED|SKIPPED) +\]|.*: rank [0-9]|.*: link |.*: path |.*Failure|.*Expected|.*Which is|.*skipped)" \
  "$build/ctest-cuda.log" || true
grep -E "tests passed|tests failed" "$build/ctest-cuda.log" || true
echo "full log: $build/ctest-cuda.log"
# The NCCL collector's checks (part of the cuda label above) with their figures, and its per-call
# cost against the real NCCL.
bash "$(dirname "$0")/nccl-gpu-checks.sh" "$build" || status=1
if ((${FUZZ_SECONDS:-600} > 0)); then
  bash "$(dirname "$0")/runtime-fuzz.sh" "$build" "${FUZZ_SECONDS:-600}" >"$build/runtime-fuzz.log" 2>&1 || status=1
  grep -vE "^runtime_fuzz: seed" "$build/runtime-fuzz.log" | tail -30
  echo "full fuzz log: $build/runtime-fuzz.log"
fi
exit "$status"
