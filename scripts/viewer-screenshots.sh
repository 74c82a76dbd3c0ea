#!/usr/bin/env bash
# Screenshots of every viewer view, for the user guide (docs/images/viewer-<trace>-<view>.png), made
# from fresh traces so the pictures never go stale.
#
#   scripts/viewer-screenshots.sh [--build DIR] [--out DIR] [--second NAME=DATABASE2]
#                                 [--only VIEW,...] [NAME=DATABASE | DATABASE ...]
#
# Without databases it traces, on this machine's CPU:
#   halo  examples/halo_demo on 4 ranks (200 iterations of a 64-double halo exchange), and a second
#         run with 4096-double halos that the compare view compares it with;
#   dl    examples/dl/train.py --model small --steps 6 on 2 ranks (data-parallel training steps);
# and shoots the GPU trace kept beside the images:
#   ddp   docs/images/ddp-resnet50-2gpu.sqlite: examples/dl/ddp_train.py --model resnet50 --wrap ddp
#         --steps 8 --warmup 2 under mpirun on 2 H100s, NCCL, NVTX steps, kernels of steps 6-8.
# Given databases, it shoots those instead (a GPU trace: gpu=run/commlens.sqlite); a database given
# without NAME= is named after its folder (run-a/commlens.sqlite: run-a). --second overlays a second
# run on NAME's histograms (the halo run's twin without it); --only shoots just those views (and
# `messages`, `kernels`: the zoomed timelines on the halo run's first allreduce and on the first
# call that launched a kernel).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build="$repo/build"
out="$repo/docs/images"
declare -a given=()
declare -A seconds=()
only=""
while (($#)); do
  case "$1" in
    --second) seconds[${2%%=*}]=$(realpath "${2#*=}"); shift 2 ;;
    --only) only=",$2,"; shift 2 ;;
    --build) build=$(realpath "$2"); shift 2 ;;
    --out) out=$(realpath -m "$2"); shift 2 ;;
    -h|--help) sed -n 2,19p "$0"; exit 0 ;;
    *=*) given+=("$1"); shift ;;
    *) [[ -f $1 ]] || { echo "viewer-screenshots: no database '$1' (see --help)" >&2; exit 2; }
       given+=("$(basename "$(dirname "$(realpath "$1")")")=$1"); shift ;;
  esac
done

commlens="$build/cli/commlens"
viewer="$build/viewer/commlens-viewer"
for tool in "$commlens" "$viewer"; do
  [[ -x "$tool" ]] || { echo "viewer-screenshots: $tool missing; build first (make build)" >&2; exit 2; }
done
export QT_QPA_PLATFORM=offscreen OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# trace NAME COMMAND...: a trace-mode run of COMMAND into $work/NAME; prints the database's path.
trace() {
  local name=$1
  shift
  "$commlens" run --quiet --mode trace --output "$work/$name" -- "$@" >"$work/$name.log" 2>&1 ||
    { cat "$work/$name.log" >&2; echo "viewer-screenshots: the $name run failed" >&2; exit 1; }
  echo "$work/$name/commlens.sqlite"
}

# has DATABASE SQL: the query returns a row (false without the sqlite3 tool, so the view is skipped).
has() {
  sqlite3 -readonly "$1" "$2" 2>/dev/null | grep -q .
}

declare -A databases=()
for pair in "${given[@]}"; do
  databases[${pair%%=*}]=$(realpath "${pair#*=}")
done
compare_with=""
if ((${#given[@]} == 0)); then
  databases[halo]=$(trace halo mpirun -np 4 --oversubscribe "$build/examples/halo_demo" 200 64)
  compare_with=$(trace halo-large mpirun -np 4 --oversubscribe "$build/examples/halo_demo" 50 4096)
  seconds[halo]=$compare_with
  databases[dl]=$(trace dl mpirun -np 2 --oversubscribe /usr/bin/python3 "$repo/examples/dl/train.py" \
    --model small --steps 6)
  databases[ddp]="$repo/docs/images/ddp-resnet50-2gpu.sqlite"
fi

for name in "${!databases[@]}"; do
  database=${databases[$name]}
  for view in summary timeline histograms matrix paths steps compare; do
    [[ -z $only || $only == *",$view,"* ]] || continue
    args=(--screenshot "$out/viewer-$name-$view.png" --view "$view")
    # Copy paths only of a run with CUDA copies, steps of one with MPI_Pcontrol(2) steps or NVTX
    # step ranges; compare only of the halo run (against its twin) or of an A/B run (its own
    # implementations); histograms with the second run overlaid when there is one.
    if [[ $view == paths ]] && ! has "$database" "SELECT 1 FROM cuda_copies LIMIT 1"; then
      continue
    fi
    if [[ $view == steps ]] && ! has "$database" "SELECT 1 FROM phases WHERE pcontrol_level = 2 LIMIT 1" &&
      ! has "$database" "SELECT 1 FROM nvtx_ranges WHERE name = 'step' LIMIT 1"; then
      continue
    fi
    if [[ $view == histograms && -n ${seconds[$name]:-} ]]; then
      args+=(--compare "${seconds[$name]}")
    fi
    if [[ $view == compare ]]; then
      if [[ $name == halo && -n $compare_with ]]; then
        args+=(--compare "$compare_with")
      elif ! has "$database" "SELECT 1 FROM mpi_calls WHERE implementation <> 0 LIMIT 1"; then
        continue
      fi
    fi
    "$viewer" "${args[@]}" "$database" 2>"$work/viewer.log" || { cat "$work/viewer.log" >&2; exit 1; }
    echo "$out/viewer-$name-$view.png"
  done
  # Zoomed in on the halo run's first MPI_Allreduce and the exchanges after it, where the timeline
  # draws each message from its send to its receive's completion.
  first_allreduce_ms=$(sqlite3 -readonly "$database" "SELECT (MIN(start_ns) - (SELECT MIN(start_ns) FROM mpi_calls)) \
    / 1e6 FROM mpi_calls WHERE function_id = (SELECT id FROM functions WHERE name = 'MPI_Allreduce')" 2>/dev/null || true)
  if [[ $name == halo && -n $first_allreduce_ms && ( -z $only || $only == *,messages,* ) ]]; then
    window=$(awk -v t="$first_allreduce_ms" 'BEGIN {printf "%.3f:%.3f", t - 0.05, t + 0.15}')
    "$viewer" --screenshot "$out/viewer-$name-messages.png" --view timeline --window "$window" "$database" \
      2>"$work/viewer.log" || { cat "$work/viewer.log" >&2; exit 1; }
    echo "$out/viewer-$name-messages.png"
  fi
  # Zoomed in on the first call that launched a GPU kernel ending within 20 ms of its start (an NCCL
  # call, or an allreduce the GPU runtime ran), where dashed lines join the call to its time on the
  # GPU and to its kernel on the stream's lane.
  launch=$(sqlite3 -readonly "$database" "SELECT (m.start_ns - o.t) / 1e6, (k.end_ns - o.t) / 1e6 \
    FROM cuda_kernels k JOIN mpi_calls m ON m.id = k.mpi_call_id, (SELECT MIN(start_ns) AS t FROM mpi_calls) o \
    WHERE k.end_ns - m.start_ns < 20000000 ORDER BY m.start_ns LIMIT 1" 2>/dev/null || true)
  if [[ -n $launch && ( -z $only || $only == *,kernels,* ) ]]; then
    window=$(awk -F'|' '{margin = ($2 - $1) / 4; printf "%.4f:%.4f", $1 - margin, $2 + margin}' <<<"$launch")
    "$viewer" --screenshot "$out/viewer-$name-kernels.png" --view timeline --window "$window" "$database" \
      2>"$work/viewer.log" || { cat "$work/viewer.log" >&2; exit 1; }
    echo "$out/viewer-$name-kernels.png"
  fi
done
