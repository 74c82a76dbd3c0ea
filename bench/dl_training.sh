#!/usr/bin/env bash
# Data-parallel training on one GPU machine with the example trainer (examples/dl/train.py), in two
# parts, each against its baseline taken in the same run:
#  1. gradient modes, per rank count: images/s with host-staged gradients (the trainer copies each
#     fusion bucket to pinned host memory for MPI) against CUDA tensors handed to MPI through the
#     commlens runtime (COMMLENS_RUNTIME=on), and one COMMLENS_RUNTIME=ab run whose report compares
#     the runtime's and the baseline's allreduces call by call;
#  2. profiler overhead: ROUNDS interleaved rounds (forwards, then backwards) of the host-staged trainer on 2 ranks without the preload,
#     profiled in summary mode and in trace mode (every collector on); median images/s and the
#     overhead on step time against the unprofiled runs.
# Every run must end with identical replicas (the trainer's parameter digest check), else it fails.
#
# usage: bench/dl_training.sh [BUILD_DIR]
# environment: RANKS ("2 4 8"), ROUNDS (5), STEPS (30), WARMUP (5), MODEL (resnet50), BATCH (32),
#   PYTHON (python3), PARTS ("modes overhead"), PROFILED_VARIANTS (the overhead part's modes, "summary trace";
#   "summary" alone gives more rounds in the same time), REPORTS (a folder for the full reports of the traced
#   host-staged and ab runs), COLLECTORS_VARIANTS (extra overhead variants MODE/COLLECTORS, e.g.
#   "summary/pmpi,mpit,nvtx": summary mode with only those collectors, to locate a cost), GRADIENTS (of the overhead
#   part: host-staged; `host` measures it on a machine without a GPU), MPS (1: run everything under
#   the CUDA Multi-Process Service, started here and stopped at the end).
set -euo pipefail
build=$(realpath "${1:-build}")
here=$(cd "$(dirname "$0")/.." && pwd)
commlens=$build/cli/commlens
python=${PYTHON:-python3}
steps=${STEPS:-30}
warmup=${WARMUP:-5}
model=${MODEL:-resnet50}
batch=${BATCH:-32}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ ${MPS:-0} == 1 ]]; then
  nvidia-cuda-mps-control -d
  trap 'echo quit | nvidia-cuda-mps-control; rm -rf "$work"' EXIT
fi

# train RANKS GRADIENTS [commlens run options...] -> prints "images/s"; fails on unequal replicas.
train() {
  local ranks=$1 gradients=$2
  shift 2
  local job=(mpirun -np "$ranks" --oversubscribe "$python" "$here/examples/dl/train.py" --model "$model"
    --batch-size "$batch" --steps "$steps" --warmup-steps "$warmup" --gradients "$gradients")
  local log=$work/train.log
  if (($# == 0)); then
    "${job[@]}" >"$log" 2>&1 || { tail -20 "$log" >&2; return 1; }
  else
    "$commlens" run --quiet "$@" -- "${job[@]}" >"$log" 2>&1 || { tail -20 "$log" >&2; return 1; }
  fi
  grep -q "replicas identical: yes" "$log" || { echo "dl_training: replicas differ" >&2; tail -5 "$log" >&2; return 1; }
  awk '/^total: /{print $2}' "$log"
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "dl_training: $model, batch $batch per rank, $steps timed steps after $warmup, MPS ${MPS:-0}, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo "no GPU")"
if [[ " ${PARTS:-modes overhead} " == *" modes "* ]]; then
  printf '%-6s %18s %18s %8s\n' ranks "host-staged img/s" "cuda+runtime img/s" ratio
  for ranks in ${RANKS:-2 4 8}; do
    staged=$(train "$ranks" host-staged)
    direct=$(COMMLENS_RUNTIME=on train "$ranks" cuda --mode summary --output "$work/on-$ranks")
    awk -v r="$ranks" -v s="$staged" -v d="$direct" 'BEGIN {printf "%-6s %18.1f %18.1f %8.3f\n", r, s, d, d / s}'
    COMMLENS_RUNTIME=ab train "$ranks" cuda --mode trace --output "$work/ab-$ranks" >/dev/null
    train "$ranks" host-staged --mode trace --output "$work/staged-$ranks" >/dev/null
    echo "-- $ranks ranks, COMMLENS_RUNTIME=ab: runtime decisions (runtime against baseline, call by call)"
    "$commlens" report "$work/ab-$ranks/commlens.sqlite" | awk '/^GPU runtime decisions/{on=1} on'
    for run in ab staged; do
      [[ -n ${REPORTS:-} ]] && mkdir -p "$REPORTS" && "$commlens" report "$work/$run-$ranks/commlens.sqlite" >"$REPORTS/$run-$ranks.txt"
    done
  done
fi
if [[ " ${PARTS:-modes overhead} " == *" overhead "* ]]; then
  # Rounds run the variants forwards, then backwards (ABBA), and each variant's overhead is the
  # median over rounds of its step time against the unprofiled run of the same round: the
  # machine's drift over minutes (clocks, the GPU's time slicing) then cancels instead of landing
  # on whichever variant ran last.
  gradients=${GRADIENTS:-host-staged}
  variants=(none ${PROFILED_VARIANTS:-summary trace} ${COLLECTORS_VARIANTS:-})
  declare -A rates overheads
  for ((round = 0; round < ${ROUNDS:-5}; ++round)); do
    order=("${variants[@]}")
    ((round % 2 == 1)) && order=($(printf '%s\n' "${variants[@]}" | tac))
    declare -A this_round=()
    for variant in "${order[@]}"; do
      case $variant in
      none) rate=$(train 2 "$gradients") ;;
      summary | trace) rate=$(train 2 "$gradients" --mode "$variant" --output "$work/$variant") ;;
      *) rate=$(train 2 "$gradients" --mode "${variant%%/*}" --collectors "${variant#*/}" --output "$work/variant") ;;
      esac
      rates[$variant]+="$rate "
      this_round[$variant]=$rate
    done
    progress="round $((round + 1))/${ROUNDS:-5}:"
    for variant in "${variants[@]}"; do
      overhead=$(awk -v b="${this_round[none]}" -v v="${this_round[$variant]}" 'BEGIN {printf "%.3f", (b / v - 1) * 100}')
      overheads[$variant]+="$overhead "
      progress+=" $variant ${this_round[$variant]} ($overhead%)"
    done
    echo "$progress" >&2 # progress: a long run's rounds so far survive an interrupted run
  done
  printf '%-28s %14s %14s  %s\n' "profiling (2 ranks)" "median img/s" "step time +%" "per round: img/s (step time +%)"
  for variant in "${variants[@]}"; do
    value=$(median <<<"${rates[$variant]}")
    overhead=$(median <<<"${overheads[$variant]}")
    rounds=$(paste -d' ' <(tr ' ' '\n' <<<"${rates[$variant]}" | grep -v '^$') <(tr ' ' '\n' <<<"${overheads[$variant]}" | grep -v '^$') |
      awk '{printf "%s (%+.1f%%) ", $1, $2}')
    printf '%-28s %14.1f %14.2f  %s\n' "$variant" "$value" "$overhead" "$rounds"
  done
fi
