#!/usr/bin/env bash
# On a machine with several GPUs: builds what profiling needs (the library, the CUDA plugin, the
# command) and runs the data-parallel training checks (tests/nccl/dl_jobs_check.py: DDP and FSDP
# under mpirun and torchrun on 2 GPUs and on up to 4), then, unless BENCH=0, the profiler's cost
# on DDP training (bench/dl_profiler_cost.sh; its settings from the environment). FEATURE_ROUNDS=N
# also runs bench/cupti_feature_cost.sh (EXTRA_TARGETS=cupti_feature_cost builds it); DL_GPUS="4"
# limits the checks to those GPU counts; CHECKS=0 skips them.
# Usage: bash scripts/dl-gpu-checks.sh [BUILD_DIR [CMAKE_ARGS...]]
set -uo pipefail
build=${1:-build-gpu}
shift || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
# NVLink multicast stays off on shared hosts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOMMLENS_WITH_CUDA=ON -DCOMMLENS_WITH_VIEWER=OFF \
  -DCOMMLENS_BUILD_TESTS=OFF "$@" >"$build.configure.log" 2>&1 || { tail -30 "$build.configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target commlens commlens_cuda commlens_cli ${EXTRA_TARGETS:-} >"$build.build.log" 2>&1 ||
  { grep -E "error|FAILED" -A5 "$build.build.log" | head -60; exit 1; }
status=0
if [[ -n ${FEATURE_ROUNDS:-} ]]; then
  bash bench/cupti_feature_cost.sh "$build" "$FEATURE_ROUNDS" 20000 || status=1
fi
if [[ ${CHECKS:-1} != 0 ]]; then
  python3 tests/nccl/dl_jobs_check.py "$build/cli/commlens" ${DL_KEEP:+--keep "$DL_KEEP"} ${DL_GPUS:+--gpus $DL_GPUS} || status=1
fi
if [[ ${BENCH:-1} != 0 ]]; then
  bash bench/dl_profiler_cost.sh "$build" || status=1
fi
exit "$status"
