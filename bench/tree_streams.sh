#!/usr/bin/env bash
# The trees' segments on one stream per rank against several (COMMLENS_RUNTIME_TREE_STREAMS, after
# ADAPT's GPU reductions on several streams): MPI_Bcast and MPI_Reduce on device buffers
# (bench/noise_trees.cpp, no noise) under COMMLENS_RUNTIME=ab, one job per stream count, in one
# run; mean ms per call of the runtime's event-driven trees, the host-staged baseline of the same
# jobs, and each stream count's ratio to one stream (below 1: faster).
# usage: bench/tree_streams.sh BUILD_DIR [RANKS [ITERATIONS [STREAMS [BYTES...]]]]
#   STREAMS: the counts to compare, comma-separated (default 1,2,4; the first is the baseline)
set -euo pipefail
build=${1:?usage: tree_streams.sh BUILD_DIR [RANKS [ITERATIONS [STREAMS [BYTES...]]]]}
ranks=${2:-4}
iterations=${3:-200}
IFS=, read -r -a counts <<<"${4:-1,2,4}"
shift $(($# < 4 ? $# : 4))
sizes=("$@")
((${#sizes[@]} > 0)) || sizes=(1048576 16777216 67108864)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for streams in "${counts[@]}"; do
  env COMMLENS_RUNTIME=ab COMMLENS_RUNTIME_COLLECTIVES=bcast,reduce COMMLENS_RUNTIME_TREE_STREAMS="$streams" \
    "$build/cli/commlens" run --mode summary --output "$out/$streams" -- \
    mpirun -np "$ranks" --oversubscribe "$build/bench/noise_trees" "$iterations" "${sizes[@]}" |
    grep '^noise_trees:' >"$out/$streams.txt"
done
echo "tree_streams: $ranks ranks, $iterations calls per half (ms per call; x: time / time on ${counts[0]} stream(s))"
# Lines: "noise_trees: OP bytes B runtime_ms R baseline_ms S" in the same order in every file.
for streams in "${counts[@]}"; do
  paste -d' ' "$out/${counts[0]}.txt" "$out/$streams.txt" |
    awk -v streams="$streams" '{ printf "%-7s %10d streams %d runtime %9.3f staged %9.3f x %6.2f\n",
                                   $2, $4, streams, $14, $16, $14 / $6 }'
done
