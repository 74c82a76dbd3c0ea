#!/usr/bin/env bash
# The merge at scale, in two parts.
# files: the rank files of jobs of thousands of ranks, written by bench/rank_files (CALLS calls a
#   rank, summary and trace), merged by `commlens merge` (wall time and peak memory) and reported
#   by `commlens report` (the same) at each size of SIZES; the first size is the baseline that the
#   others' time per rank and memory are compared with.
# job: RANKS ranks oversubscribed on this machine running bench/finalize_time in trace mode, every
#   rank writing into one folder (the baseline), then into NODES emulated nodes' folders of their
#   own (the ranks' data reaches rank 0 over MPI): rank 0's MPI_Finalize, the job's wall time and
#   what the database holds.
#   bench/merge_scale.sh BUILD_DIR [files|job|all]
# Environment: SIZES ("256 4096 16384"), CALLS (1000), RANKS (256), NODES (16), ITERATIONS (200).
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build=$(realpath "${1:?usage: merge_scale.sh BUILD_DIR [files|job|all]}")
part=${2:-all}
read -r -a sizes <<<"${SIZES:-256 4096 16384}"
calls=${CALLS:-1000}
ranks=${RANKS:-256}
nodes=${NODES:-16}
iterations=${ITERATIONS:-200}
commlens=$build/cli/commlens
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# "seconds peak_MiB" of a command, its output discarded.
measure() {
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" ||
    { cat "$work/stderr" >&2; return 1; }
  awk '{printf "%s %.0f\n", $1, $2 / 1024}' "$work/time"
}

files() {
  printf '%-8s %6s %9s %8s %12s %9s %9s %10s %15s %11s\n' mode ranks calls merge_s ms_per_rank peak_MiB \
    report_s report_MiB per_rank_ratio peak_ratio
  for mode in summary trace; do
    local base_per_rank="" base_peak=""
    for size in "${sizes[@]}"; do
      local folder=$work/$mode-$size
      "$build/bench/rank_files" "$folder" "$size" "$calls" "$mode" >/dev/null
      read -r merge_s peak < <(measure "$commlens" merge "$folder" -o "$folder.sqlite" --keep-rank-files)
      read -r report_s report_peak < <(measure "$commlens" report "$folder.sqlite")
      local per_rank
      per_rank=$(awk -v s="$merge_s" -v n="$size" 'BEGIN {printf "%.2f", 1000 * s / n}')
      base_per_rank=${base_per_rank:-$per_rank}
      base_peak=${base_peak:-$peak}
      printf '%-8s %6d %9d %8.1f %12s %9d %9.1f %10d %15.2f %11.2f\n' "$mode" "$size" "$((size * calls))" \
        "$merge_s" "$per_rank" "$peak" "$report_s" "$report_peak" \
        "$(awk -v a="$per_rank" -v b="$base_per_rank" 'BEGIN {print a / b}')" \
        "$(awk -v a="$peak" -v b="$base_peak" 'BEGIN {print a / b}')"
      rm -rf "$folder" "$folder.sqlite"
    done
  done
}

# One job: "finalize_ms wall_s merged_ranks" with its ranks' folders chosen by `layout`.
job_once() {
  local layout=$1 out=$work/job
  rm -rf "$out"
  mkdir -p "$out"
  cat >"$out/wrap.sh" <<EOF
#!/bin/sh
case $layout in
one) export COMMLENS_OUTPUT=$out/node0 ;;
nodes) export COMMLENS_OUTPUT=$out/node\$(( OMPI_COMM_WORLD_RANK / ($ranks / $nodes) )) ;;
esac
exec "\$@"
EOF
  chmod +x "$out/wrap.sh"
  local began finalize_ms wall
  began=$(date +%s.%N)
  finalize_ms=$(mpirun --oversubscribe -np "$ranks" -x LD_PRELOAD="$build/collectors/pmpi/libcommlens.so" \
    -x COMMLENS_MODE=trace -x COMMLENS_QUIET=1 "$out/wrap.sh" "$build/bench/finalize_time" "$iterations" |
    awk '/^mpi_finalize_ms/ {print $2}')
  wall=$(awk -v a="$began" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
  echo "$finalize_ms $wall $(sqlite3 "$out/node0/commlens.sqlite" "SELECT value FROM run WHERE key = 'merged_ranks'")"
}

job() {
  printf '%-28s %12s %8s %13s %16s\n' folders finalize_ms wall_s merged_ranks finalize_ratio
  read -r base_ms base_wall base_ranks < <(job_once one)
  printf '%-28s %12.0f %8.1f %13s %16.2f\n' "1 shared by $ranks ranks" "$base_ms" "$base_wall" "$base_ranks" 1
  read -r ms wall merged < <(job_once nodes)
  printf '%-28s %12.0f %8.1f %13s %16.2f\n' "$nodes of $((ranks / nodes)) ranks (no sharing)" "$ms" "$wall" \
    "$merged" "$(awk -v a="$ms" -v b="$base_ms" 'BEGIN {print a / b}')"
}

case $part in
files) files ;;
job) job ;;
all) files && job ;;
*) echo "merge_scale.sh: unknown part $part (files, job or all)" >&2 && exit 2 ;;
esac
