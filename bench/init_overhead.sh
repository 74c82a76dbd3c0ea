#!/usr/bin/env bash
# What the profiler adds to MPI_Init, per rank, for two builds of libcommlens.so (A, B) with every
# collector on, beside the same program with only the PMPI collector (B) and unprofiled;
# interleaved ROUNDS times at each job size (2 ranks, and 64 ranks oversubscribed on the cores
# there are). Prints medians over rounds of: MPI_Init as bench/init_time sees it (mean over
# ranks), the profiler_overhead rows `init` (wall time, and the CPU time of the thread where the
# library records it: the rest is waiting, for other ranks or for a core), `mpit_init` and
# `finalize` (where the ranks' clock exchange is; means over ranks), then the ratio A / B of the
# `init` row and of MPI_Init.
#   bench/init_overhead.sh BUILD_DIR LIBRARY_A LIBRARY_B [ROUNDS=5] [SIZES="2 64"]
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build=${1:?usage: init_overhead.sh BUILD_DIR LIBRARY_A LIBRARY_B [ROUNDS] [SIZES]}
library_a=$(realpath "${2:?library A}")
library_b=$(realpath "${3:?library B}")
rounds=${4:-5}
read -r -a sizes <<<"${5:-2 64}"
program=$(realpath "$build/bench/init_time")
output=$(mktemp -d)
trap 'rm -rf "$output"' EXIT

run() { # run SIZE none|A|B|B-pmpi -> "mpi_init_ms init_ms init_cpu_ms mpit_init_ms finalize_ms"
  local size=$1 which=$2 library collectors=all
  rm -rf "${output:?}"/*
  case $which in
  none)
    mpirun -np "$size" --oversubscribe "$program" | awk '/^mpi_init_ms/ {print $2, "-", "-", "-", "-"}'
    return
    ;;
  A) library=$library_a ;;
  B) library=$library_b ;;
  B-pmpi) library=$library_b collectors=pmpi ;;
  esac
  local seen
  seen=$(mpirun -np "$size" --oversubscribe -x LD_PRELOAD="$library" -x COMMLENS_COLLECTORS=$collectors \
    -x COMMLENS_QUIET=1 -x COMMLENS_OUTPUT="$output" "$program" | awk '/^mpi_init_ms/ {print $2}')
  local rows cpu="'-'" # for a library that does not record it
  if [[ -n $(sqlite3 "$output/commlens.sqlite" \
    "SELECT name FROM pragma_table_info('profiler_overhead') WHERE name = 'cpu_time_ns'") ]]; then
    cpu="(SELECT printf('%.1f', avg(cpu_time_ns) / 1e6) FROM profiler_overhead WHERE component = 'init')"
  fi
  rows=$(sqlite3 "$output/commlens.sqlite" "SELECT printf('%.1f %s %.1f %.1f',
      (SELECT avg(time_ns) / 1e6 FROM profiler_overhead WHERE component = 'init'), $cpu,
      coalesce((SELECT avg(time_ns) / 1e6 FROM profiler_overhead WHERE component = 'mpit_init'), 0),
      (SELECT avg(time_ns) / 1e6 FROM profiler_overhead WHERE component = 'finalize'))")
  echo "$seen $rows"
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# '-' for the unprofiled run and for a value a library does not record.
shown_median() { [[ $1 == none || $2 == *-* ]] && echo - || median <<<"$2"; }

for size in "${sizes[@]}"; do
  declare -A seen=() init=() cpu=() mpit=() finalize=()
  for ((round = 0; round < rounds; ++round)); do
    for which in none B-pmpi A B; do
      read -r s i c m f < <(run "$size" "$which")
      seen[$which]+="$s "
      init[$which]+="$i "
      cpu[$which]+="$c "
      mpit[$which]+="$m "
      finalize[$which]+="$f "
    done
  done
  printf '%3s ranks %-8s %14s %10s %14s %14s %12s\n' "$size" lib "MPI_Init ms" "init ms" "init CPU ms" \
    "mpit_init ms" "finalize ms"
  for which in none B-pmpi A B; do
    printf '%3s ranks %-8s %14s %10s %14s %14s %12s\n' "$size" "$which" "$(median <<<"${seen[$which]}")" \
      "$(shown_median $which "${init[$which]}")" "$(shown_median $which "${cpu[$which]}")" \
      "$(shown_median $which "${mpit[$which]}")" "$(shown_median $which "${finalize[$which]}")"
  done
  awk -v size="$size" -v ia="$(median <<<"${init[A]}")" -v ib="$(median <<<"${init[B]}")" \
    -v sa="$(median <<<"${seen[A]}")" -v sb="$(median <<<"${seen[B]}")" -v s0="$(median <<<"${seen[none]}")" \
    'BEGIN {printf "%3s ranks: init row A/B = %.1fx; MPI_Init A/B = %.2fx; MPI_Init added over unprofiled: A %+.1f ms, B %+.1f ms\n",
            size, ia / ib, sa / sb, sa - s0, sb - s0}'
  unset seen init cpu mpit finalize
done
echo "($rounds interleaved rounds; all collectors unless B-pmpi; A = $library_a, B = $library_b)"
