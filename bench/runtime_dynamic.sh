#!/usr/bin/env bash
# The runtime's Dynamic selection against Static selection (the tuning table) on a steady workload,
# in one run: bench/runtime_dynamic (CALLS allreduces and CALLS allgathers per size) under
# COMMLENS_RUNTIME_SELECT=static, then =dynamic, with the same table (TABLE, or the shipped one for
# the GPU). Prints per operation and size both means over the second half of the calls (after
# exploration) and over all calls, and dynamic / static (the aim: within 1.05 after convergence),
# then what Dynamic selection decided last per operation and size (from runtime_ops).
# usage: bench/runtime_dynamic.sh BUILD_DIR [RANKS] [CALLS] [TABLE] [BYTES...]
set -euo pipefail
build=$(realpath "${1:?usage: runtime_dynamic.sh BUILD_DIR [RANKS] [CALLS] [TABLE] [BYTES...]}")
ranks=${2:-4}
calls=${3:-400}
table=${4:-}
shift $(($# < 4 ? $# : 4))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(8192 65536 1048576 16777216)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -z "$table" ] || export COMMLENS_RUNTIME_TUNING=$(realpath "$table")
out=$(mktemp -d)
for select in static dynamic; do
  COMMLENS_RUNTIME=on COMMLENS_RUNTIME_SELECT=$select COMMLENS_RUNTIME_BACKGROUND_OPENS=0 \
    COMMLENS_RUNTIME_COLLECTIVES=allreduce,allgather \
    "$build/cli/commlens" run --output "$out/$select" --mode trace -- \
    mpirun -np "$ranks" --oversubscribe "$build/bench/runtime_dynamic" "$calls" "${sizes[@]}" >"$out/$select.txt"
done
echo "runtime_dynamic: $ranks ranks, $calls calls per operation and size, table ${table:-shipped}"
/usr/bin/python3 - "$out" <<'PY'
import sqlite3, sys
out = sys.argv[1]
def means(name):
    rows = {}
    for line in open(f"{out}/{name}.txt"):
        parts = line.split()
        if len(parts) == 4 and parts[1].isdigit():
            rows[(parts[0], int(parts[1]))] = (float(parts[2]), float(parts[3]))
    return rows
static, dynamic = means("static"), means("dynamic")
print(f"{'operation':10} {'bytes':>10} {'static_us':>10} {'dynamic_us':>11} {'ratio':>6} {'ratio_all':>9}")
for key in sorted(static):
    s, d = static[key], dynamic.get(key, (float("nan"),) * 2)
    print(f"{key[0]:10} {key[1]:>10} {s[0]:>10.2f} {d[0]:>11.2f} {d[0] / s[0]:>6.3f} {d[1] / s[1]:>9.3f}")
database = sqlite3.connect(f"{out}/dynamic/commlens.sqlite")
print("dynamic selection's last decision (rank 0) per operation and size:")
# SQLite takes the bare columns from the row where MAX() is found: the last call's.
for function, size, algorithm, source, _ in database.execute("""
    SELECT f.name, o.bytes, o.algorithm, o.decision_source, MAX(o.start_ns) FROM runtime_ops o
    JOIN functions f ON f.id = o.function_id
    WHERE o.rank = 0 AND o.decision = 'runtime' GROUP BY f.name, o.bytes ORDER BY f.name, o.bytes"""):
    print(f"  {function:14} {size:>10} {algorithm:12} {source}")
PY
echo "databases: $out/static/commlens.sqlite $out/dynamic/commlens.sqlite"
