#!/usr/bin/env bash
# Differential fuzzing of the GPU collective runtime: runs tests/runtime/fuzz/runtime_fuzz under
# the runtime, one seed after another, for SECONDS in all, cycling through rank counts, runtime
# modes and runtime collectives. Each run is traced: the program checks every result against its
# host reference, check_rows.py checks every stored row against what the program passed. Any
# failure (a mismatch, a wrong row, a crash or a hang) prints one command that reproduces it.
#
# usage: scripts/runtime-fuzz.sh [BUILD_DIR [SECONDS [STEPS [MAX_LOG2_COUNT]]]]
# environment: FUZZ_RANKS ("2 4 8"), FUZZ_MODES ("on ab dynamic gpu_leader staged push streams";
# dynamic: COMMLENS_RUNTIME=on with COMMLENS_RUNTIME_SELECT=dynamic, so every candidate algorithm runs
# on fuzzed calls; gpu_leader, staged: COMMLENS_RUNTIME=on with a tuning table that runs every
# data-movement call on that algorithm; push: one whose bcast parents write their children's
# buffers, in 4 KiB segments on two streams per rank; streams: COMMLENS_RUNTIME=on with
# COMMLENS_RUNTIME_TREE_STREAMS=3, the trees' segments on three streams per rank; both for the sets
# with bcast, ibcast or reduce; resident: COMMLENS_RUNTIME=on with COMMLENS_RUNTIME_RESIDENT_BYTES=4194304
# and a table whose resident rules allow as much, so that under MPS every call of up to 4 MiB a
# rank runs on the resident kernel), FUZZ_COLLECTIVES ("allreduce
# allreduce,p2p bcast,reduce allreduce,bcast,reduce,p2p" and the data-movement set: allgather,
# gather, scatter, alltoall, reduce_scatter_block and reduce_scatter with allreduce; the nonblocking
# sets: iallreduce,iallgather,ireduce_scatter,ibcast alone and beside allreduce, allgather,
# reduce_scatter_block, bcast, reduce and p2p), FUZZ_SEED (the
# first seed; default: the time), FUZZ_TIMEOUT (seconds a run may take, 600).
set -uo pipefail
build=$(realpath "${1:-build}")
seconds=${2:-60}
steps=${3:-200}
max_log2=${4:-20}
here=$(cd "$(dirname "$0")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
program=$build/tests/runtime/runtime_fuzz
commlens=$build/cli/commlens
for needed in "$program" "$commlens"; do
  [[ -x $needed ]] || { echo "runtime-fuzz: $needed not built (a CUDA build has it)" >&2; exit 2; }
done

data_movement=allreduce,allgather,gather,scatter,alltoall,reduce_scatter_block,reduce_scatter
# The nonblocking collectives alone, and beside the blocking ones and point-to-point on the same
# communicators (their requests in the same wait and test calls).
nonblocking="iallreduce,iallgather,ireduce_scatter,ibcast allreduce,allgather,reduce_scatter_block,iallreduce,iallgather,ireduce_scatter,ibcast,bcast,reduce,p2p"
seed=${FUZZ_SEED:-$(date +%s)}
end=$((SECONDS + seconds))
runs=0 failures=0 calls=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for algorithm in gpu_leader staged; do
  printf '{"format": 1, "rules": [{"algorithm": "one_shot"}], "data_movement": [{"algorithm": "%s"}]}\n' \
    "$algorithm" >"$work/$algorithm.json"
done
printf '{"format": 1, "rules": [{"algorithm": "one_shot"}], "trees": [%s]}\n' \
  '{"collective": "bcast", "push": true, "segment_bytes": 4096, "window": 3}' >"$work/push.json"
# Every collective on the resident kernel up to 4 MiB, whatever the shipped table's resident limits.
resident_rules=""
for collective in allreduce bcast reduce allgather gather scatter alltoall reduce_scatter_block reduce_scatter; do
  resident_rules+="${resident_rules:+, }{\"collective\": \"$collective\", \"max_bytes\": 4194304}"
done
printf '{"format": 1, "rules": [{"algorithm": "one_shot"}], "resident": [%s]}\n' "$resident_rules" >"$work/resident.json"
echo "runtime-fuzz: first seed $seed, $steps steps a run, counts up to 2^$max_log2, ${seconds}s"
while ((SECONDS < end)); do
  for ranks in ${FUZZ_RANKS:-2 4 8}; do
    for mode in ${FUZZ_MODES:-on ab dynamic gpu_leader staged push streams}; do
      for collectives in ${FUZZ_COLLECTIVES:-allreduce allreduce,p2p bcast,reduce allreduce,bcast,reduce,p2p $data_movement $nonblocking}; do
        ((SECONDS < end)) || break 3
        run=$work/$seed
        mkdir -p "$run/log"
        settings="COMMLENS_RUNTIME=$mode COMMLENS_RUNTIME_COLLECTIVES=$collectives"
        case $mode in
        dynamic) settings="COMMLENS_RUNTIME=on COMMLENS_RUNTIME_SELECT=dynamic COMMLENS_RUNTIME_COLLECTIVES=$collectives" ;;
        gpu_leader | staged)
          # Only data-movement calls differ from `on`: the other sets are left to it.
          [[ $collectives == *gather* ]] || continue
          settings="COMMLENS_RUNTIME=on COMMLENS_RUNTIME_TUNING=$work/$mode.json COMMLENS_RUNTIME_COLLECTIVES=$collectives"
          ;;
        push)
          [[ $collectives == *bcast* ]] || continue
          settings="COMMLENS_RUNTIME=on COMMLENS_RUNTIME_TUNING=$work/push.json COMMLENS_RUNTIME_TREE_STREAMS=2 COMMLENS_RUNTIME_COLLECTIVES=$collectives"
          ;;
        resident)
          settings="COMMLENS_RUNTIME=on COMMLENS_RUNTIME_RESIDENT_BYTES=4194304 COMMLENS_RUNTIME_TUNING=$work/resident.json COMMLENS_RUNTIME_COLLECTIVES=$collectives"
          ;;
        streams)
          # Only the trees differ from `on`: sets without bcast, ibcast or reduce are left to it.
          [[ ,$collectives, == *bcast,* || ,$collectives, == *,reduce,* ]] || continue
          settings="COMMLENS_RUNTIME=on COMMLENS_RUNTIME_TREE_STREAMS=3 COMMLENS_RUNTIME_COLLECTIVES=$collectives"
          ;;
        esac
        env $settings COMMLENS_FUZZ_LOG="$run/log" timeout "${FUZZ_TIMEOUT:-600}" \
          "$commlens" run --mode trace --output "$run/trace" -- \
          mpirun -np "$ranks" --oversubscribe "$program" "$seed" "$steps" "$max_log2" >"$run/out" 2>&1
        status=$?
        summary=$(grep -m1 "^runtime_fuzz: seed" "$run/out")
        rows=$(python3 "$here/tests/runtime/fuzz/check_rows.py" "$run/trace/commlens.sqlite" "$run/log" 2>&1)
        rows_status=$?
        runs=$((runs + 1))
        calls=$((calls + $(cat "$run"/log/rank-*.tsv 2>/dev/null | wc -l)))
        if ((status != 0 || rows_status != 0)) || [[ -z $summary ]]; then
          failures=$((failures + 1))
          echo "runtime-fuzz: FAILED ranks $ranks $settings seed $seed (exit $status)"
          grep -E "MISMATCH|rror|signal|failed|Abort|abort" "$run/out" | head -20
          echo "$rows" | tail -21
          echo "  reproduce: $settings COMMLENS_MODE=trace COMMLENS_FUZZ_LOG=DIR $commlens run --output OUT -- mpirun -np $ranks --oversubscribe $program $seed $steps $max_log2"
          [[ $settings != *TUNING* ]] || echo "  where $work/$mode.json holds $(cat "$work/$mode.json")"
        else
          echo "$summary ${settings} rows ok ($(echo "$rows" | tail -1 | cut -d' ' -f2-))"
        fi
        rm -rf "$run"
        seed=$((seed + 1))
      done
    done
  done
done
echo "runtime-fuzz: $runs runs, $calls logged calls, $failures failed"
((failures == 0))
