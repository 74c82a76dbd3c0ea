#!/usr/bin/env bash
# What a push and pop of NVTX's default domain costs with libcommlens.so as NVTX's tool (the
# collector set without CUPTI: COMMLENS_COLLECTORS=pmpi,mpit,nvtx), against the same program with
# no tool, interleaved for ROUNDS rounds on one rank. Prints the median ns per pair of each and
# their difference. No GPU needed.
#   bench/nvtx_tool_cost.sh BUILD_DIR [ROUNDS=5] [STEPS=200] [PAIRS=1000]
set -euo pipefail
build=$(realpath "${1:?usage: nvtx_tool_cost.sh BUILD_DIR [ROUNDS] [STEPS] [PAIRS]}")
rounds=${2:-5}
steps=${3:-200}
pairs=${4:-1000}
program=$build/bench/nvtx_tool_cost
library=$build/collectors/pmpi/libcommlens.so
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() { # $1: with or without; prints ns per pair
  if [[ $1 == with ]]; then
    mpirun -np 1 -x LD_PRELOAD="$library" -x COMMLENS_COLLECTORS=pmpi,mpit,nvtx -x COMMLENS_OUTPUT="$work/out" \
      "$program" "$steps" "$pairs" | awk '/ns_per_pair/ {print $2}'
    rm -rf "$work/out"
  else
    mpirun -np 1 "$program" "$steps" "$pairs" | awk '/ns_per_pair/ {print $2}'
  fi
}
without="" with=""
for ((round = 0; round < rounds; ++round)); do
  without+="$(run without) "
  with+="$(run with) "
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
base=$(median <<<"$without")
tool=$(median <<<"$with")
printf '%-44s %10s  %s\n' variant "ns/pair" rounds
printf '%-44s %10.2f  %s\n' "no NVTX tool (NVTX's no-op)" "$base" "$without"
printf '%-44s %10.2f  %s\n' "libcommlens.so as NVTX's tool" "$tool" "$with"
awk -v t="$tool" -v b="$base" 'BEGIN {printf "added per push and pop: %.2f ns (median of '"$rounds"' rounds, '"$steps"' steps of '"$pairs"' pairs and a step range)\n", t - b}'
