#!/usr/bin/env bash
# What profiling costs PyTorch training with one GPU per rank: DDP over NCCL
# (examples/dl/ddp_train.py) of each model in MODELS, without a profiler and under each variant,
# interleaved in ROUNDS rounds (forwards, then backwards, so drift over minutes cancels). Each
# variant's overhead in a round is its median step time against the unprofiled run of the same
# round; printed: the median over rounds and the spread, for the median step and the mean step
# (with COMMLENS_KERNELS=steps the mean includes the steps whose kernels are recorded one by one),
# and the fastest run of each variant against the fastest unprofiled run. Then, per variant, a 95%
# interval of the median-step overhead (bench/median_interval.py: order statistics, no normality
# assumed) and, for the default modes, whether it lies within their budget (summary 1%, trace 3%).
# With MAX_ROUNDS above ROUNDS, rounds go on until both budgets are resolved either way. Last, the
# host time to queue a step (its start to the synchronisation that waits for the GPU) and what each
# variant adds to it per round: the profiler's work on the launching threads, where they do not wait
# for the GPU inside the step (in ResNet-50's DDP they do, and it varies as the step does). And for
# the commlens variants the own time per step they measured of themselves inside the run (the
# report's training-steps section, where copies come from the runtime's calls): their direct cost,
# free of the noise between runs.
#
# usage: bench/dl_profiler_cost.sh BUILD_DIR
# environment: GPUS (all, at most 8), MODELS ("resnet50 transformer"), ROUNDS (3), MAX_ROUNDS
#   (ROUNDS: more rounds while a budget is unresolved), PYTHON (python3), VARIANTS (default:
#   none summary trace kernel-steps all-kernels no-cupti torch-profiler); the job's and the
#   variants' settings are in bench/dl_job.sh (STEPS, WARMUP, LAUNCHER, BIND).
set -euo pipefail
build=$(realpath "${1:?usage: dl_profiler_cost.sh BUILD_DIR}")
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/dl_job.sh" # commlens, python, gpus, work
((gpus >= 1)) || { echo "dl_profiler_cost: no GPU" >&2; exit 1; }
rounds=${ROUNDS:-3}
variants=(${VARIANTS:-none summary trace kernel-steps all-kernels no-cupti torch-profiler})

# run MODEL VARIANT -> "median_ms mean_ms issue_ms own_ms"
run() {
  ddp_job "$1" "$2" "$gpus" "$work/out" || exit 2
  rm -rf "$work/out"
  "${job[@]}" >"$work/log" 2>&1 || { tail -30 "$work/log" >&2; return 1; }
  [[ -n ${SHOW_STEPS:-} ]] && sed -n "s/^steps (ms)/$1 $2 step ms/p" "$work/log" >&2
  ddp_result "$work/log" "$work/out"
}

fastest() { tr ' ' '\n' | grep -v '^$' | sort -g | head -1; }

echo "dl_profiler_cost: DDP, $gpus GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)), ${LAUNCHER:-torchrun}, $rounds rounds${MAX_ROUNDS:+ (up to $MAX_ROUNDS while a budget is unresolved)}, ${WARMUP:-5} + ${STEPS:-40} steps"
for model in ${MODELS:-resnet50 transformer}; do
  declare -A medians=() means=() over_median=() over_mean=() issues=() over_issue=() owns=()
  for ((round = 0; ; ++round)); do
    ((round < rounds)) || { ((round < ${MAX_ROUNDS:-0})) && unresolved over_median; } || break
    order=("${variants[@]}")
    ((round % 2 == 1)) && order=($(printf '%s\n' "${variants[@]}" | tac))
    declare -A this_median=() this_mean=() this_issue=() this_own=()
    for variant in "${order[@]}"; do
      read -r this_median[$variant] this_mean[$variant] this_issue[$variant] this_own[$variant] < <(run "$model" "$variant") || true
      [[ -n ${this_own[$variant]:-} ]] || { echo "dl_profiler_cost: the $model $variant job failed" >&2; exit 1; }
    done
    line="$model round $((round + 1)):"
    for variant in "${variants[@]}"; do
      medians[$variant]+="${this_median[$variant]} "
      means[$variant]+="${this_mean[$variant]} "
      over_median[$variant]+="$(awk -v v="${this_median[$variant]}" -v b="${this_median[none]}" 'BEGIN {printf "%.3f", (v / b - 1) * 100}') "
      over_mean[$variant]+="$(awk -v v="${this_mean[$variant]}" -v b="${this_mean[none]}" 'BEGIN {printf "%.3f", (v / b - 1) * 100}') "
      issues[$variant]+="${this_issue[$variant]} "
      [[ ${this_own[$variant]} == - ]] || owns[$variant]+="${this_own[$variant]} "
      over_issue[$variant]+="$(awk -v v="${this_issue[$variant]}" -v b="${this_issue[none]}" 'BEGIN {printf "%.3f", v - b}') "
      line+=" $variant ${this_median[$variant]} ms (issued in ${this_issue[$variant]}, own ${this_own[$variant]})"
    done
    echo "$line" >&2 # progress
  done
  # Last column: the fastest run's median step of each variant against the fastest unprofiled one.
  # Noise between runs (CPU placement, GPU clocks) only ever adds time, so where it is as large as
  # the effect the fastest runs are the steadier estimate.
  fastest_none=$(fastest <<<"${medians[none]}")
  printf '%-12s %-15s %12s %26s %12s %26s %10s\n' model variant "median step" "median-step overhead" "mean step" \
    "mean-step overhead" "fastest"
  for variant in "${variants[@]}"; do
    best=$(fastest <<<"${medians[$variant]}")
    printf '%-12s %-15s %9.2f ms %+7.2f%% (%s) %9.2f ms %+7.2f%% (%s) %+9.2f%%\n' "$model" "$variant" \
      "$(median <<<"${medians[$variant]}")" "$(median <<<"${over_median[$variant]}")" "$(spread <<<"${over_median[$variant]}")" \
      "$(median <<<"${means[$variant]}")" "$(median <<<"${over_mean[$variant]}")" "$(spread <<<"${over_mean[$variant]}")" \
      "$(awk -v v="$best" -v b="$fastest_none" 'BEGIN {printf "%.3f", (v / b - 1) * 100}')"
  done
  printf '%-12s %-15s %26s %16s\n' model variant "95% interval of overhead" "budget"
  for variant in "${variants[@]}"; do
    [[ $variant == none ]] && continue
    read -r _ low high verdict < <(interval "$variant" ${over_median[$variant]})
    budget=$(budget_of "$variant")
    if [[ $low == nan ]]; then # too few rounds for a 95% interval
      printf '%-12s %-15s %26s %16s\n' "$model" "$variant" "(too few rounds)" "${budget:+$budget%: }$verdict"
    else
      printf '%-12s %-15s %+11.2f%% to %+7.2f%% %16s\n' "$model" "$variant" "$low" "$high" \
        "${budget:+$budget%: }$verdict"
    fi
  done
  # The host time to queue a step: what the profiler adds on the launching threads, far steadier
  # than the step time. A step slows by at most this much where the host, not the GPU, bounds it.
  none_step=$(median <<<"${medians[none]}")
  printf '%-12s %-15s %16s %26s %16s\n' model variant "issue time" "added per step (spread)" "share of step"
  for variant in "${variants[@]}"; do
    added=$(median <<<"${over_issue[$variant]}")
    printf '%-12s %-15s %13.3f ms %+10.3f ms (%s) %+15.2f%%\n' "$model" "$variant" \
      "$(median <<<"${issues[$variant]}")" "$added" "$(spread <<<"${over_issue[$variant]}" | tr -d %)" \
      "$(awk -v a="$added" -v s="$none_step" 'BEGIN {printf "%.3f", a / s * 100}')"
  done
  # What the profiler measured of itself inside each run (the training-steps section's own time):
  # its direct cost, free of the noise between runs.
  printf '%-12s %-15s %30s %16s\n' model variant "commlens's own time per step" "share of step"
  for variant in "${variants[@]}"; do
    [[ -n ${owns[$variant]:-} ]] || continue
    own=$(median <<<"${owns[$variant]}")
    printf '%-12s %-15s %14.3f ms (%s) %15.3f%%\n' "$model" "$variant" "$own" \
      "$(spread <<<"${owns[$variant]}" | tr -d %)" "$(awk -v a="$own" -v s="$none_step" 'BEGIN {printf "%.3f", a / s * 100}')"
  done
  unset medians means over_median over_mean issues over_issue owns
done
