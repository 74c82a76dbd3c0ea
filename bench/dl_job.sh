# The DDP training job of the DL cost benchmarks (examples/dl/ddp_train.py under torchrun or
# mpirun), unprofiled or under one profiler variant, and what it measured. Sourced by
# dl_profiler_cost.sh and dl_profiler_cost_paired.sh.
# Variants:
#   none            no profiler
#   summary         commlens, default settings, summary mode (no kernel records)
#   trace           commlens, default settings, trace mode
#   kernel-steps    commlens summary with COMMLENS_KERNELS=steps (kernels of steps 6-8)
#   all-kernels     commlens summary with COMMLENS_KERNELS=all (every kernel recorded)
#   no-cupti        commlens summary with COMMLENS_COLLECTORS=pmpi,mpit,nvtx
#   cupti-copies    commlens summary with COMMLENS_CUDA_COPIES=cupti (CUPTI attached for copies)
#   torch-profiler  torch.profiler, CPU and CUDA activities over every step
# Environment: STEPS (40), WARMUP (5), LAUNCHER (torchrun | mpirun), BIND (1: each rank pinned to
# its share of the CPUs it may use near its GPU, ddp_train.py --bind-cpus; 0: as launched), GPUS
# (all, at most 8), PYTHON (python3).
# Sourcing it, after `build` and `here` are set, sets `commlens`, `python`, `gpus` and `work` (a
# folder removed on exit).
commlens=$build/cli/commlens
python=${PYTHON:-python3}
gpus=${GPUS:-$(nvidia-smi --list-gpus 2>/dev/null | wc -l)}
((gpus > 8)) && gpus=8
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ddp_job MODEL VARIANT GPUS OUTPUT: the command in the array `job`, the profile going to OUTPUT.
ddp_job() {
  local model=$1 variant=$2 gpus=$3 output=$4
  local trainer=("$here/examples/dl/ddp_train.py" --model "$model" --steps "${STEPS:-40}" --warmup "${WARMUP:-5}")
  [[ ${BIND:-1} == 1 ]] && trainer+=(--bind-cpus)
  if [[ ${LAUNCHER:-torchrun} == mpirun ]]; then
    job=(mpirun -np "$gpus" --oversubscribe "$python" "${trainer[@]}")
  else
    job=("$python" -m torch.distributed.run --standalone --nproc_per_node "$gpus" "${trainer[@]}")
  fi
  local profiled=("$commlens" run --quiet --output "$output")
  case $variant in
  none) ;;
  summary) job=("${profiled[@]}" --mode summary -- "${job[@]}") ;;
  trace) job=("${profiled[@]}" --mode trace -- "${job[@]}") ;;
  all-kernels) job=(env COMMLENS_KERNELS=all "${profiled[@]}" --mode summary -- "${job[@]}") ;;
  kernel-steps) job=(env COMMLENS_KERNELS=steps "${profiled[@]}" --mode summary -- "${job[@]}") ;;
  no-cupti) job=("${profiled[@]}" --mode summary --collectors pmpi,mpit,nvtx -- "${job[@]}") ;;
  cupti-copies) job=(env COMMLENS_CUDA_COPIES=cupti "${profiled[@]}" --mode summary -- "${job[@]}") ;;
  torch-profiler) job+=(--torch-profiler) ;;
  *) echo "unknown variant $variant" >&2; return 2 ;;
  esac
}

# commlens's own time per step on the copying threads, from the report of the profile in OUTPUT
# (ms; "-" where it has none: unprofiled, or copies taken from CUPTI).
own_ms() {
  [[ -f $1/commlens.sqlite ]] || { echo -; return; }
  "$commlens" report --format json "$1" 2>/dev/null | "$python" -c '
import json, sys
def steps_of(node):
    if isinstance(node, dict):
        if "profiler_ns_per_runtime_call" in node:
            return node
        node = list(node.values())
    for value in node if isinstance(node, list) else []:
        found = steps_of(value)
        if found:
            return found
steps = steps_of(json.load(sys.stdin)) or {}
own = steps.get("profiler_ns_per_runtime_call", 0) * steps.get("copies_per_step", 0) / 1e6
print("%.4f" % own if own > 0 else "-")' || echo -
}

# ddp_result LOG OUTPUT -> "median_ms mean_ms issue_ms own_ms" of rank 0's steps.
ddp_result() {
  grep '^DDP_TRAIN ' "$1" | tail -1 | cut -c11- |
    "$python" -c 'import json, sys; f = json.load(sys.stdin); print("%.3f %.3f %.3f" % (f["median_ms"], f["mean_ms"], f["median_issue_ms"]), end=" ")'
  own_ms "$2"
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
spread() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%+.2f%% to %+.2f%%", lo, hi}'; }
# The budgets the default modes are held to, in percent of the step.
budget_of() { case $1 in summary) echo 1 ;; trace) echo 3 ;; esac; }

# interval VARIANT OVERHEAD... -> "median low high verdict" of the overheads (bench/median_interval.py:
# order statistics), with the verdict against the variant's budget where it has one.
interval() {
  local variant=$1 budget
  shift
  budget=$(budget_of "$variant")
  "$python" "$here/bench/median_interval.py" ${budget:+--budget "$budget"} "$@"
}

# unresolved OVERHEADS: whether a budgeted variant's overheads (the associative array named
# OVERHEADS, by variant) still straddle its budget, or are too few for an interval.
unresolved() {
  local -n by_variant=$1
  local variant verdict
  for variant in "${variants[@]}"; do
    [[ -n $(budget_of "$variant") ]] || continue
    # shellcheck disable=SC2086 # the overheads are one number per round
    verdict=$(interval "$variant" ${by_variant[$variant]:-})
    [[ $verdict == *" unresolved" || $verdict == *" too-few-rounds" ]] && return 0
  done
  return 1
}
