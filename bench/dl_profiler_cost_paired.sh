#!/usr/bin/env bash
# What profiling costs DDP training, measured in pairs run at the same time. The machine's GPUs are
# split in two halves, each with half the CPUs; in each round a variant runs on one half while the
# unprofiled job runs on the other, the halves swapping every round. What drifts over minutes on a
# shared host (GPU clocks, other jobs' heat and traffic) then falls on both jobs of a pair alike,
# and the halves' own differences cancel over the swaps. Each pair gives the variant's median step
# against the unprofiled job's; printed per variant: the median over pairs, their spread, a 95%
# interval (bench/median_interval.py) with the verdict against the default modes' budgets (summary
# 1%, trace 3%), and the own time per step each profiled run measured of itself. Each job uses half
# the GPUs, one rank per GPU (bench/dl_profiler_cost.sh runs one job on all of them instead).
#
# usage: bench/dl_profiler_cost_paired.sh BUILD_DIR
# environment: GPUS (all, at most 8; even), MODELS (resnet50), ROUNDS (5), MAX_ROUNDS (ROUNDS: more
#   rounds while a budget is unresolved), VARIANTS (summary trace; see bench/dl_job.sh, which also
#   has the job's settings: STEPS, WARMUP, LAUNCHER, BIND), PYTHON (python3).
set -euo pipefail
build=$(realpath "${1:?usage: dl_profiler_cost_paired.sh BUILD_DIR}")
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/dl_job.sh" # commlens, python, gpus, work
((gpus >= 2 && gpus % 2 == 0)) || { echo "dl_profiler_cost_paired: needs an even number of GPUs, found $gpus" >&2; exit 1; }
half=$((gpus / 2))
rounds=${ROUNDS:-5}
variants=(${VARIANTS:-summary trace})

# The two halves: GPUs and the CPUs this script may use, each split in two.
gpu_sides=("$(seq -s, 0 $((half - 1)))" "$(seq -s, "$half" $((gpus - 1)))")
read -r -a cpu_sides < <("$python" -c 'import os
cpus = sorted(os.sched_getaffinity(0)); h = len(cpus) // 2
print(",".join(map(str, cpus[:h])), ",".join(map(str, cpus[h:])))')

# side_job SIDE MODEL VARIANT NAME: runs the job on one half in the background, into $work/NAME.*
side_job() {
  ddp_job "$2" "$3" "$half" "$work/$4.out" || exit 2
  rm -rf "$work/$4.out"
  CUDA_VISIBLE_DEVICES=${gpu_sides[$1]} taskset -c "${cpu_sides[$1]}" "${job[@]}" >"$work/$4.log" 2>&1 &
}

# pair MODEL VARIANT SIDE -> "variant_median_ms unprofiled_median_ms own_ms", the variant on SIDE.
pair() {
  side_job "$3" "$1" "$2" profiled
  local profiled_pid=$!
  side_job $((1 - $3)) "$1" none unprofiled
  local unprofiled_pid=$! failed=0
  wait "$profiled_pid" || { tail -30 "$work/profiled.log" >&2; failed=1; }
  wait "$unprofiled_pid" || { tail -30 "$work/unprofiled.log" >&2; failed=1; }
  ((failed == 0)) || return 1
  local variant_ms unprofiled_ms own
  read -r variant_ms _ _ own < <(ddp_result "$work/profiled.log" "$work/profiled.out")
  read -r unprofiled_ms _ < <(ddp_result "$work/unprofiled.log" "$work/unprofiled.out")
  echo "$variant_ms $unprofiled_ms $own"
}

echo "dl_profiler_cost_paired: DDP, two jobs of $half GPUs at once ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)), ${LAUNCHER:-torchrun}, $rounds rounds${MAX_ROUNDS:+ (up to $MAX_ROUNDS while a budget is unresolved)}, ${WARMUP:-5} + ${STEPS:-40} steps"
for model in ${MODELS:-resnet50}; do
  declare -A overheads=() owns=() unprofiled=()
  for ((round = 0; ; ++round)); do
    ((round < rounds)) || { ((round < ${MAX_ROUNDS:-0})) && unresolved overheads; } || break
    line="$model round $((round + 1)):"
    for variant in "${variants[@]}"; do
      read -r variant_ms unprofiled_ms own < <(pair "$model" "$variant" $((round % 2))) || true
      [[ -n ${unprofiled_ms:-} ]] || { echo "dl_profiler_cost_paired: a job of $model $variant failed" >&2; exit 1; }
      overheads[$variant]+="$(awk -v v="$variant_ms" -v b="$unprofiled_ms" 'BEGIN {printf "%.3f", (v / b - 1) * 100}') "
      unprofiled[$variant]+="$unprofiled_ms "
      [[ $own == - ]] || owns[$variant]+="$own "
      line+=" $variant $variant_ms ms against $unprofiled_ms ms (own $own)"
    done
    echo "$line" >&2 # progress
  done
  printf '%-12s %-15s %7s %26s %26s %22s %30s\n' model variant pairs "median overhead (spread)" \
    "95% interval of overhead" "budget" "commlens's own time per step"
  for variant in "${variants[@]}"; do
    read -r median_overhead low high verdict < <(interval "$variant" ${overheads[$variant]})
    budget=$(budget_of "$variant")
    own="-"
    if [[ -n ${owns[$variant]:-} ]]; then
      own_step=$(median <<<"${owns[$variant]}")
      own=$(awk -v a="$own_step" -v s="$(median <<<"${unprofiled[$variant]}")" \
        'BEGIN {printf "%.3f ms (%.3f%%)", a, a / s * 100}')
    fi
    intervals="(too few pairs)"
    [[ $low == nan ]] || intervals=$(printf '%+.2f%% to %+.2f%%' "$low" "$high")
    printf '%-12s %-15s %7d %+9.2f%% (%s) %26s %22s %30s\n' "$model" "$variant" \
      "$(wc -w <<<"${overheads[$variant]}")" "$median_overhead" "$(spread <<<"${overheads[$variant]}")" \
      "$intervals" "${budget:+$budget%: }$verdict" "$own"
  done
  unset overheads owns unprofiled
done
