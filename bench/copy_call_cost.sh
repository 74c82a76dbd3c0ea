#!/usr/bin/env bash
# What recording copies adds to a cudaMemcpyAsync on the calling thread (bench/copy_call_cost.cpp,
# one rank, the shared CUDA runtime as PyTorch uses it): unprofiled, with libcommlens.so but the CUDA
# collector off, with copies taken from the runtime's calls (the default for such programs) in
# summary and in trace mode, and with CUPTI attached for copies; ROUNDS interleaved rounds, medians
# of host ns per copy, device to device and device to pinned host, and the difference to unprofiled;
# beside them the own ns a runtime call that runs recording copies from the calls measured of
# themselves (profiler_overhead row cuda_runtime_calls), free of the noise between runs.
# Needs a GPU.
#   bench/copy_call_cost.sh BUILD_DIR [ROUNDS=5] [COPIES=200000] [BYTES=4096]
set -euo pipefail
build=${1:?usage: copy_call_cost.sh BUILD_DIR [ROUNDS] [COPIES] [BYTES]}
rounds=${2:-5}
copies=${3:-200000}
bytes=${4:-4096}
program="$build/bench/copy_call_cost"
preload="$build/collectors/pmpi/libcommlens.so"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
variants=(none cuda-off calls-summary calls-trace cupti)
run() { # variant round -> "d2d_ns d2h_ns own_ns"
  # A folder per run: the merge of a run's rank file may still be going on when the next run starts.
  local settings=(COMMLENS_OUTPUT="$out/$1-$2" COMMLENS_QUIET=1 LD_PRELOAD="$preload")
  case $1 in
  none) settings=() ;;
  cuda-off) settings+=(COMMLENS_COLLECTORS=pmpi,mpit,nvtx) ;;
  calls-summary) settings+=(COMMLENS_MODE=summary COMMLENS_CUDA_COPIES=calls) ;;
  calls-trace) settings+=(COMMLENS_MODE=trace COMMLENS_CUDA_COPIES=calls) ;;
  cupti) settings+=(COMMLENS_MODE=summary COMMLENS_CUDA_COPIES=cupti) ;;
  esac
  # env inside mpirun: the rank is profiled, not the launcher
  printf '%s %s ' $(mpirun -np 1 env "${settings[@]}" "$program" "$copies" "$bytes")
  own_ns "$out/$1-$2/commlens.sqlite"
}
# commlens's own ns a runtime call as the run measured it of itself (profiler_overhead), "-" where
# it has none (unprofiled, CUPTI, the CUDA collector off).
own_ns() {
  [[ -f $1 ]] || { echo -; return; }
  python3 - "$1" <<'PY'
import sqlite3, sys
count, ns = sqlite3.connect(sys.argv[1]).execute(
    "SELECT SUM(count), SUM(time_ns) FROM profiler_overhead WHERE component = 'cuda_runtime_calls'").fetchone()
print("%.1f" % (ns / count) if count else "-")
PY
}
declare -A d2d d2h own
for ((round = 0; round < rounds; ++round)); do
  for variant in "${variants[@]}"; do
    # A command substitution waits for mpirun to end (the run merges its profile before it does).
    read -r a b c <<<"$(run "$variant" "$round")"
    d2d[$variant]+="$a "
    d2h[$variant]+="$b "
    [[ $c == - ]] || own[$variant]+="$c "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "copy_call_cost: $copies copies of $bytes B a kind, $rounds rounds interleaved ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
printf '%-14s %12s %10s %12s %10s %14s\n' variant "DtoD ns" "+ns" "DtoH ns" "+ns" "own ns a call"
base_d2d=$(median <<<"${d2d[none]}")
base_d2h=$(median <<<"${d2h[none]}")
for variant in "${variants[@]}"; do
  a=$(median <<<"${d2d[$variant]}")
  b=$(median <<<"${d2h[$variant]}")
  c=$(median <<<"${own[$variant]:-}")
  awk -v n="$variant" -v a="$a" -v b="$b" -v ba="$base_d2d" -v bb="$base_d2h" -v c="${c:--}" \
    'BEGIN {printf "%-14s %12.1f %+10.1f %12.1f %+10.1f %14s\n", n, a, a - ba, b, b - bb, c}'
done
