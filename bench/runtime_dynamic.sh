#!/usr/bin/env bash
# The runtime's Dynamic selection against Static selection (the tuning table) on a steady workload,
# in one run: bench/runtime_dynamic (CALLS allreduces and CALLS allgathers per size) under
# COMMLENS_RUNTIME_SELECT=static, then =dynamic, then =static again, with the same table (TABLE,
# or the shipped one for the GPU). Prints per operation and size, over the second half of the calls
# (after exploration): the mean of the two static runs, dynamic's mean, dynamic / static (the aim:
# within 1.05 after convergence), the second static run / the first (how far two runs of the same
# choice differ on this machine: the noise the ratio sits in), dynamic / static by medians, and
# dynamic / static over all calls; then what Dynamic selection decided last per operation and size
# (from runtime_ops). Use several thousand CALLS: a confirmed choice's stretch between re-checks
# doubles from 64 calls to 4096 (runtime/tuning/dynamic_learner.hpp), so a short run still pays
# for re-checks that a steady workload amortises.
# usage: bench/runtime_dynamic.sh BUILD_DIR [RANKS] [CALLS] [TABLE] [BYTES...]
set -euo pipefail
build=$(realpath "${1:?usage: runtime_dynamic.sh BUILD_DIR [RANKS] [CALLS] [TABLE] [BYTES...]}")
ranks=${2:-4}
calls=${3:-4000}
table=${4:-}
shift $(($# < 4 ? $# : 4))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(8192 65536 1048576 16777216)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -z "$table" ] || export COMMLENS_RUNTIME_TUNING=$(realpath "$table")
out=$(mktemp -d)
for run in static dynamic static_again; do
  COMMLENS_RUNTIME=on COMMLENS_RUNTIME_SELECT=${run%_again} COMMLENS_RUNTIME_BACKGROUND_OPENS=0 \
    COMMLENS_RUNTIME_COLLECTIVES=allreduce,allgather \
    "$build/cli/commlens" run --output "$out/$run" --mode trace -- \
    mpirun -np "$ranks" --oversubscribe "$build/bench/runtime_dynamic" "$calls" "${sizes[@]}" >"$out/$run.txt"
done
echo "runtime_dynamic: $ranks ranks, $calls calls per operation and size, table ${table:-shipped}"
/usr/bin/python3 - "$out" <<'PY'
import sqlite3, sys
out = sys.argv[1]
def times(name):  # (operation, bytes) -> (mean 2nd half, mean all, median 2nd half)
    rows = {}
    for line in open(f"{out}/{name}.txt"):
        parts = line.split()
        if len(parts) == 5 and parts[1].isdigit():
            rows[(parts[0], int(parts[1]))] = tuple(float(value) for value in parts[2:])
    return rows
static, dynamic, again = times("static"), times("dynamic"), times("static_again")
nan = (float("nan"),) * 3
print(f"{'operation':10} {'bytes':>10} {'static_us':>10} {'dynamic_us':>11} {'ratio':>6} {'noise':>6} "
      f"{'ratio_median':>12} {'ratio_all':>9}")
for key in sorted(static):
    s1, s2, d = static[key], again.get(key, nan), dynamic.get(key, nan)
    mean = [(a + b) / 2 for a, b in zip(s1, s2)]
    print(f"{key[0]:10} {key[1]:>10} {mean[0]:>10.2f} {d[0]:>11.2f} {d[0] / mean[0]:>6.3f} "
          f"{s2[0] / s1[0]:>6.3f} {d[2] / mean[2]:>12.3f} {d[1] / mean[1]:>9.3f}")
database = sqlite3.connect(f"{out}/dynamic/commlens.sqlite")
print("dynamic selection's last decision (rank 0) per operation and size:")
# SQLite takes the bare columns from the row where MAX() is found: the last call's.
for function, size, algorithm, source, _ in database.execute("""
    SELECT f.name, o.bytes, o.algorithm, o.decision_source, MAX(o.start_ns) FROM runtime_ops o
    JOIN functions f ON f.id = o.function_id
    WHERE o.rank = 0 AND o.decision = 'runtime' GROUP BY f.name, o.bytes ORDER BY f.name, o.bytes"""):
    print(f"  {function:14} {size:>10} {algorithm:12} {source}")
PY
echo "databases: $out/static/commlens.sqlite $out/dynamic/commlens.sqlite $out/static_again/commlens.sqlite"
