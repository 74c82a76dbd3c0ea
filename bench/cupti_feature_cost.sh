#!/usr/bin/env bash
# What each CUPTI feature the CUDA collector enables adds to a kernel launch and its stream waits
# (bench/cupti_feature_cost.cu): ROUNDS interleaved rounds of every variant, medians in ns per launch
# group and the difference to the variant with nothing enabled. Needs a GPU.
#   bench/cupti_feature_cost.sh BUILD_DIR [ROUNDS=3] [GROUPS=20000]
set -euo pipefail
program="${1:?usage: cupti_feature_cost.sh BUILD_DIR [ROUNDS] [GROUPS]}/bench/cupti_feature_cost"
rounds=${2:-3}
groups=${3:-20000}
# Outside the kernel steps the CUDA collector keeps on copies (memcpy, their API records, external
# correlation, the IPC callbacks), unified memory counters and NVTX ranges: "outside" is that set.
outside=memcpy,copyapi,extcorr,push,callbacks,um,marker
all=kernel,sync,memcpy,extcorr,api,push,callbacks,um,marker
# VARIANTS (space-separated, with none among them) runs only those.
variants=(${VARIANTS:-none kernel kernel,api sync stamp memcpy copyapi extcorr,push callbacks um marker "$outside"
  memcpy,copyapi,extcorr,push,callbacks,marker "$all"})
declare -A values
for ((round = 0; round < rounds; ++round)); do
  for variant in "${variants[@]}"; do
    read -r _ ns < <("$program" "$variant" "$groups")
    values[$variant]+="$ns "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
base=$(median <<<"${values[none]}")
printf '%-52s %12s %10s  %s\n' features "ns/group" "+ns" "rounds"
for variant in "${variants[@]}"; do
  value=$(median <<<"${values[$variant]}")
  awk -v n="$variant" -v v="$value" -v b="$base" -v r="${values[$variant]}" \
    'BEGIN {printf "%-52s %12.1f %10.1f  %s\n", n, v, v - b, r}'
done
echo "(median of $rounds rounds of $groups groups: event record, stream wait, kernel, event record, stream wait; outside the kernel steps the CUDA collector enables $outside, inside them $all)"
