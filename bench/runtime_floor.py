#!/usr/bin/env python3
"""Where a small device-buffer collective's time goes, from a commlens trace (merged database).

usage: runtime_floor.py DATABASE [--skip N]

For every call the GPU runtime was asked to take (a runtime_ops row) it places the GPU operations
the call caused (cuda_kernels, cuda_copies and cuda_memsets rows whose mpi_call_id is the call's,
as the CUDA collector links them) on the call's span on that rank and splits the span into:

  before_gpu  call start to the first GPU operation's start: for the runtime the agreement through
              node shared memory (publish, barrier), the legacy-stream wait, IPC handle lookups and
              the launch; for the host-staged baseline the wrapper's set-up and the first copy's launch
  gpu         time some GPU operation of the call ran (the union of their spans)
  gpu_gaps    time between the first operation's start and the last one's end when none ran (for
              the baseline the MPI call between its copies)
  after_gpu   the last GPU operation's end to the call's end: completion wait and final handshake
              (the barrier that lets the peers reuse their buffers)

and, alongside (overlapping the phases above): cuda_sync (time the thread spent in CUDA
synchronisation calls inside the call: the completion wait), ipc_open (CUDA IPC get/open/close
calls inside the call), and the runtime's own host phases from its runtime_ops row: publish
(pointer queries, IPC handle exports and the wait for the buffers' producers on the legacy stream),
agree (waiting at the agreement's barriers for every rank to publish, then to map), map (the
peers' buffers looked up in the IPC handle cache, opened on a miss) and barriers (the waits at the
algorithm's own node-segment barriers after the agreement: barrier_ns - agree_ns). A
rank whose call caused no GPU operation (one whose data another rank's kernel moves, as every rank
but its GPU's leader in the shared-GPU and GPU-leader algorithms) spent the call waiting for the
others: its calls are counted under no_gpu and their before_gpu ... after_gpu are left blank. The
resident kernel (algorithm resident) outlives the calls it serves, so it is not counted as any
call's GPU operation: its calls show under no_gpu, with publish (the buffer checks and the
legacy-stream wait) and agree (the kernel's wait for the other ranks' flags, timed on the GPU);
the run table's runtime_resident.rankR lines, printed last, split the rest of their time.

Per collective, bytes (runtime_ops.bytes: for allgather, gather and scatter a block), path
(runtime, baseline for the ab mode's host-staged turns, fallback), algorithm and rank it prints
the medians over the calls (each phase's own median, so they need not add up to the total's), the
first N calls of each group left out (--skip, default 1: they open the peers' IPC handles). Then
per collective and bytes the median over calls of the slowest rank's duration, runtime against
baseline, as the benchmarks report it. Times in microseconds.
"""
import argparse
import sqlite3
import statistics
import sys
from collections import defaultdict

GPU_TABLES = ("cuda_kernels", "cuda_copies", "cuda_memsets")
RESIDENT_KERNEL = "resident_kernel"  # its spans cover many calls (runtime/resident/)
PHASES = ("before_gpu", "gpu", "gpu_gaps", "after_gpu")
RUNTIME_PHASES = ("publish", "agree", "map", "barriers")
PHASE_COLUMNS = ("publish_ns", "map_ns", "agree_ns", "barrier_ns")
PATH_OF_DECISION = {"runtime": "runtime", "ab_baseline": "baseline", "fallback": "fallback"}


def gpu_breakdown(call_start, call_end, operations):
    """The phases of one call in ns from its span and its GPU operations' (start, end) spans;
    None when the call caused no GPU operation."""
    if not operations:
        return None
    spans = sorted(operations)
    busy = 0
    covered_start, covered_end = spans[0]
    for start, end in spans[1:]:
        if start > covered_end:
            busy += covered_end - covered_start
            covered_start, covered_end = start, end
        else:
            covered_end = max(covered_end, end)
    busy += covered_end - covered_start
    first_start = spans[0][0]
    last_end = max(end for _, end in spans)
    return {
        "before_gpu": first_start - call_start,
        "gpu": busy,
        "gpu_gaps": (last_end - first_start) - busy,
        "after_gpu": call_end - last_end,
    }


def tables(db):
    return {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def spans_by_call(db, table_names):
    """mpi_call_id -> [(start_ns, end_ns)] over the given tables that exist."""
    spans = defaultdict(list)
    for table in table_names:
        named = "name" in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        resident = f" AND name NOT LIKE '%{RESIDENT_KERNEL}%'" if table == "cuda_kernels" and named else ""
        for call_id, start, end in db.execute(
            f"SELECT mpi_call_id, start_ns, end_ns FROM {table} WHERE mpi_call_id IS NOT NULL{resident}"
        ):
            spans[call_id].append((start, end))
    return spans


def load_calls(db):
    """The calls the runtime was asked to take, in call order: dicts with the call's key, span and
    host phases (None where the row has none: nonblocking calls, files written before the columns)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(runtime_ops)")}
    phases = ", ".join(f"r.{c}" if c in columns else "NULL" for c in PHASE_COLUMNS)
    rows = db.execute(
        f"SELECT m.id, m.rank, f.name, r.bytes, r.decision, r.algorithm, m.start_ns, m.end_ns, {phases} "
        "FROM runtime_ops r JOIN mpi_calls m ON m.id = r.mpi_call_id JOIN functions f ON f.id = m.function_id "
        "ORDER BY m.rank, m.id"
    )
    calls = []
    for call_id, rank, name, size, decision, algorithm, start, end, publish, mapping, agree, barrier in rows:
        calls.append(
            {
                "id": call_id,
                "rank": rank,
                "collective": name.removeprefix("MPI_").lower(),
                "bytes": size,
                "path": PATH_OF_DECISION.get(decision, decision),
                "algorithm": algorithm,
                "start": start,
                "end": end,
                "publish": publish,
                "map": mapping,
                "agree": agree,
                # The resident kernel's agreement is no node-segment barrier: it has none.
                "barriers": None if barrier is None or agree is None else max(barrier - agree, 0)
                if algorithm == "resident" else barrier - agree,
            }
        )
    return calls


def summed(spans):
    return sum(end - start for start, end in spans)


def median_us(values):
    return statistics.median(values) / 1000.0 if values else None


def breakdowns(db, skip):
    """Per (collective, bytes, path, algorithm, rank): calls, no_gpu, and each figure's median in us;
    per (collective, bytes, path): the median slowest-rank duration in us."""
    present = tables(db)
    gpu = spans_by_call(db, [t for t in GPU_TABLES if t in present])
    syncs = spans_by_call(db, ["cuda_synchronizations"] if "cuda_synchronizations" in present else [])
    ipc = spans_by_call(db, ["ipc_events"] if "ipc_events" in present else [])
    groups = defaultdict(list)
    for call in load_calls(db):
        groups[(call["collective"], call["bytes"], call["path"], call["algorithm"], call["rank"])].append(call)
    rows = {}
    slowest = defaultdict(lambda: defaultdict(int))  # (collective, bytes, path) -> call index -> ns
    for key, calls in groups.items():
        kept = calls[skip:]
        figures = defaultdict(list)
        no_gpu = 0
        for index, call in enumerate(kept):
            total = call["end"] - call["start"]
            figures["total"].append(total)
            figures["cuda_sync"].append(summed(syncs.get(call["id"], [])))
            figures["ipc_open"].append(summed(ipc.get(call["id"], [])))
            for phase in RUNTIME_PHASES:
                if call[phase] is not None:
                    figures[phase].append(call[phase])
            phases = gpu_breakdown(call["start"], call["end"], gpu.get(call["id"], []))
            if phases is None:
                no_gpu += 1
            else:
                for phase in PHASES:
                    figures[phase].append(phases[phase])
            turn = slowest[key[:3]]
            turn[index] = max(turn[index], total)
        rows[key] = {"calls": len(kept), "no_gpu": no_gpu, **{name: median_us(v) for name, v in figures.items()}}
    slowest_us = {key: median_us(list(turns.values())) for key, turns in slowest.items()}
    return rows, slowest_us


def cell(value):
    return "-" if value is None else f"{value:.1f}"


def print_report(rows, slowest_us, out=sys.stdout):
    columns = ("total", *PHASES, "cuda_sync", "ipc_open", *RUNTIME_PHASES)
    print("medians per rank, us (phases: bench/runtime_floor.py's docstring)", file=out)
    header = f"{'collective':<10} {'bytes':>7} {'path':<8} {'algorithm':<18} {'rank':>4} {'calls':>5} {'no_gpu':>6}"
    print(header + "".join(f" {c:>10}" for c in columns), file=out)
    for key in sorted(rows, key=lambda k: (k[0], k[1], k[2], str(k[3]), k[4])):
        collective, size, path, algorithm, rank = key
        row = rows[key]
        line = f"{collective:<10} {size:>7} {path:<8} {str(algorithm):<18} {rank:>4} {row['calls']:>5} {row['no_gpu']:>6}"
        print(line + "".join(f" {cell(row.get(c)):>10}" for c in columns), file=out)
    print("\nslowest rank per call, median us", file=out)
    print(f"{'collective':<10} {'bytes':>7} {'runtime':>10} {'baseline':>10} {'ratio':>8}", file=out)
    for collective, size in sorted({(k[0], k[1]) for k in slowest_us}):
        runtime = slowest_us.get((collective, size, "runtime"))
        baseline = slowest_us.get((collective, size, "baseline"))
        ratio = baseline / runtime if runtime and baseline else None
        print(f"{collective:<10} {size:>7} {cell(runtime):>10} {cell(baseline):>10} {cell(ratio):>8}", file=out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("database")
    parser.add_argument("--skip", type=int, default=1, help="calls left out at the start of each group")
    args = parser.parse_args()
    db = sqlite3.connect(f"file:{args.database}?mode=ro", uri=True)
    present = tables(db)
    if "runtime_ops" not in present or "mpi_calls" not in present:
        sys.exit(f"runtime_floor: {args.database} has no runtime_ops or mpi_calls (a trace-mode run of the GPU runtime)")
    state = dict(db.execute("SELECT key, value FROM run WHERE key LIKE 'cuda_collectors%'").fetchall())
    if state.get("cuda_collectors", "on") != "on":
        print(f"runtime_floor: the CUDA collectors were off ({state.get('cuda_collectors_reason', '?')}): "
              "no GPU operations to place", file=sys.stderr)
    rows, slowest_us = breakdowns(db, args.skip)
    if not rows:
        sys.exit(f"runtime_floor: no runtime_ops rows joined to mpi_calls in {args.database}")
    print_report(rows, slowest_us)
    # The resident kernel's own account of its calls (each rank's means over all its resident calls).
    for key, value in db.execute("SELECT key, value FROM run WHERE key LIKE 'runtime_resident.rank%' ORDER BY key"):
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
