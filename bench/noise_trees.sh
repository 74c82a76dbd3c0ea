#!/usr/bin/env bash
# The rooted collectives under system noise, the experiment of "ADAPT: an event-based adaptive
# collective communication framework" (Luo et al.): MPI_Bcast and MPI_Reduce on device
# buffers with the runtime's event-driven trees, its blocking trees (a barrier after every segment:
# COMMLENS_RUNTIME_TREE_PROGRESS=blocking) and the host-staged baseline (the other half of each
# COMMLENS_RUNTIME=ab run), without and with NOISE (COMMLENS_NOISE, default 10 Hz, 0-10 ms on
# every rank). Four jobs of bench/noise_trees.cpp, one table: mean ms per call, and the slowdown
# under noise of each.
# usage: bench/noise_trees.sh BUILD_DIR [RANKS [ITERATIONS [NOISE [BYTES...]]]]
set -euo pipefail
build=${1:?usage: noise_trees.sh BUILD_DIR [RANKS [ITERATIONS [NOISE [BYTES...]]]]}
ranks=${2:-4}
iterations=${3:-200}
noise=${4:-10:10}
shift $(($# < 4 ? $# : 4))
sizes=("$@")
((${#sizes[@]} > 0)) || sizes=(65536 1048576 16777216)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for progress in event blocking; do
  for injected in off on; do
    settings=(COMMLENS_RUNTIME=ab COMMLENS_RUNTIME_COLLECTIVES=bcast,reduce COMMLENS_RUNTIME_TREE_PROGRESS=$progress)
    [[ $injected == on ]] && settings+=("COMMLENS_NOISE=$noise")
    env "${settings[@]}" "$build/cli/commlens" run --mode summary --output "$out/$progress-$injected" -- \
      mpirun -np "$ranks" --oversubscribe "$build/bench/noise_trees" "$iterations" "${sizes[@]}" |
      grep '^noise_trees:' >"$out/$progress-$injected.txt"
  done
done
echo "noise_trees: $ranks ranks, $iterations calls per half, noise $noise (ms per call; x: time with noise / without)"
printf '%-7s %10s %9s %9s %9s %9s %9s %9s %8s %8s %8s\n' op bytes event blocking staged event+n blocking+n \
  staged+n event_x blocking_x staged_x
# Lines: "noise_trees: OP bytes B runtime_ms R baseline_ms S" in the same order in every file.
paste -d' ' "$out/event-off.txt" "$out/event-on.txt" "$out/blocking-off.txt" "$out/blocking-on.txt" |
  awk '{ op = $2; bytes = $4; e = $6; s = $8; en = $14; sn = $16; b = $22; bn = $30
         printf "%-7s %10d %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %8.2f %8.2f %8.2f\n", op, bytes, e, b, s, en, bn, sn,
                en / e, bn / b, sn / s }'
