#!/usr/bin/env python3
"""Checks a traced data_movement_check run: the program's own verdict, then that the runtime took
exactly the calls it must (COMMLENS_RUNTIME=on: a `runtime` row for every eligible call; ab: the
runtime and the baseline each took some, the runtime no more than the eligible calls), that every
call it must not take has a `fallback` row with a reason (in ab mode it may be the baseline's turn;
a call the runtime chose to stage, algorithm `staged`, is a `runtime` row either way), and that
every runtime_ops row matches its mpi_calls row
(check_rows.py's checks: function, implementation). MODE resident: as on, and every rank ran some
calls on the resident kernel.

usage: data_movement_rows.py DATABASE PROGRAM_OUTPUT MODE
Prints `data_movement_check: skipped` when the program was (no GPU); exit status 1 on a difference."""
import re
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from check_rows import runtime_ops_problems  # noqa: E402

FUNCTIONS = ("MPI_Allgather", "MPI_Gather", "MPI_Scatter", "MPI_Alltoall", "MPI_Reduce_scatter_block",
             "MPI_Reduce_scatter")


def decisions(db, rank):
    marks = ",".join("?" * len(FUNCTIONS))
    rows = db.execute(
        f"""SELECT r.decision, count(*), sum(r.reason IS NULL OR r.reason = ''), sum(r.algorithm = 'staged')
            FROM runtime_ops r JOIN functions f ON f.id = r.function_id
            WHERE r.rank = ? AND f.name IN ({marks}) GROUP BY r.decision""", (rank, *FUNCTIONS)).fetchall()
    return {decision: (count, without_reason, staged) for decision, count, without_reason, staged in rows}


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    output = Path(argv[2]).read_text(errors="replace")
    if "data_movement_check: skipped" in output:
        print("data_movement_check: skipped")
        return 0
    mode = argv[3]
    problems = []
    resident = mode == "resident"
    mode = "on" if resident else mode
    if "data_movement_check: ok" not in output:
        problems.append("the program did not report ok")
    counts = {int(m[1]): (int(m[2]), int(m[3])) for m in
              re.finditer(r"rank (\d+): runtime_eligible (\d+) baseline_only (\d+) failures 0", output)}
    if not counts:
        problems.append("no rank reported its counts")
    db = sqlite3.connect(argv[1])
    for rank, (eligible, baseline_only) in sorted(counts.items()):
        seen = decisions(db, rank)
        runtime, _, staged = seen.get("runtime", (0, 0, 0))
        ab_baseline = seen.get("ab_baseline", (0, 0, 0))[0]
        fallback, fallback_without_reason, _ = seen.get("fallback", (0, 0, 0))
        # A call the runtime chose to stage (algorithm staged: a rule or Dynamic selection's turn)
        # skips the agreement, so it is a `runtime` row even where a rank's buffers rule the IPC
        # algorithms out: the runtime took between `eligible` and `eligible + staged` calls.
        if mode == "on" and (runtime + fallback != eligible + baseline_only or ab_baseline
                             or not eligible <= runtime <= eligible + staged):
            problems.append(f"rank {rank}: {runtime} runtime ({staged} staged), {ab_baseline} ab_baseline, "
                            f"{fallback} fallback rows; {eligible} eligible, {baseline_only} for the baseline")
        # ab: a call the ranks decline together lands on the baseline's turn as ab_baseline.
        if mode == "ab" and (runtime + ab_baseline + fallback != eligible + baseline_only
                             or runtime - staged > eligible or fallback > baseline_only
                             or min(runtime, ab_baseline) == 0):
            problems.append(f"rank {rank}: {runtime} runtime, {ab_baseline} ab_baseline, {fallback} fallback rows; "
                            f"{eligible} eligible, {baseline_only} for the baseline")
        if resident and not db.execute("SELECT count(*) FROM runtime_ops WHERE rank = ? AND algorithm = 'resident'",
                                        (rank,)).fetchone()[0]:
            problems.append(f"rank {rank}: no call ran on the resident kernel")
        if fallback_without_reason:
            problems.append(f"rank {rank}: {fallback_without_reason} fallback rows without a reason")
    ops_problems, rows = runtime_ops_problems(db)
    problems += ops_problems[:20]
    for problem in problems:
        print(f"data_movement_rows: {problem}")
    print(f"data_movement_rows: {rows} runtime_ops rows, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
