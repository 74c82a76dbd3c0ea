#!/usr/bin/env python3
"""Checks a runtime_fuzz trace: every mpi_calls row against the row the program logged for its call
(function, bytes sent and received, buffer location, datatype, peer; -2 or * in the log: not
checked), and every runtime_ops row against its call: same function, an allreduce's bytes equal
to the call's, a bcast's (blocking or not) or reduce's the larger of the call's sent and received bytes, a tree row's
algorithm naming its tree, segment size and window (and its streams, when more than one: the row's
`streams` from 1 to that), a `staged` row (the baseline the runtime chose)
a `runtime` decision run by MPI, and the call's implementation one of its rows'
(a MPI_Sendrecv has a row for each half); a `resident` row a `runtime` decision of the resident
kernel, on one stream, without segments. A nonblocking or persistent receive's row is written when it is posted, before the runtime
knows how the message will come, so only its runtime_ops rows say that.

usage: check_rows.py DATABASE LOG_DIR
Prints one line per difference (at most 20 per rank) and a summary; exit status 1 on any."""
import re
import sqlite3
import sys
from pathlib import Path

COLUMNS = ("function", "bytes_sent", "bytes_recv", "buffer_location", "datatype", "peer")


def logged_rows(path, problems):
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        fields = line.split("\t")
        try:
            rows.append((fields[0], int(fields[1]), int(fields[2]), int(fields[3]), fields[4], int(fields[5])))
        except (IndexError, ValueError):
            problems.append(f"{path.name} line {number} unreadable ({line!r}): the rank died while writing it?")
            break
    return rows


def stored_rows(db, rank):
    return db.execute(
        """SELECT f.name, c.bytes_sent, c.bytes_recv, c.buffer_location, COALESCE(d.name, '-'), c.peer, c.id
           FROM mpi_calls c JOIN functions f ON f.id = c.function_id
           LEFT JOIN datatypes d ON d.id = c.datatype
           WHERE c.rank = ? AND c.thread = 0 ORDER BY c.id""", (rank,)).fetchall()


def compare_rank(db, rank, expected):
    logged_functions = {row[0] for row in expected}
    stored = [row for row in stored_rows(db, rank) if row[0] in logged_functions]
    problems = []
    if len(stored) != len(expected):
        problems.append(f"rank {rank}: {len(stored)} stored calls of the logged functions, {len(expected)} logged")
    for index, (want, got) in enumerate(zip(expected, stored)):
        for column, wanted, value in zip(COLUMNS, want, got):
            if wanted in (-2, "*") or wanted == value:
                continue
            problems.append(f"rank {rank} call {index} ({want[0]}, stored id {got[6]}): {column} {value!r}, "
                            f"expected {wanted!r}")
        if want[0] != got[0]:
            break  # out of step: the rest would only repeat it
    return problems


POSTED_RECEIVES = {"MPI_Irecv", "MPI_Imrecv", "MPI_Recv_init"}
# A nonblocking collective's mpi_calls.implementation is what the runtime meant to run at the call;
# the ranks may still agree on the baseline in its job, which only its runtime_ops row says.
POSTED_COLLECTIVES = {"MPI_Iallreduce", "MPI_Iallgather", "MPI_Ireduce_scatter_block", "MPI_Ireduce_scatter",
                      "MPI_Ibcast"}
ROOTED = {"MPI_Bcast", "MPI_Ibcast", "MPI_Reduce"}
SHAPE = "(flat|chain|binary|binomial)"
TREE_ALGORITHM = re.compile(
    rf"(blocking_)?tree:gpu={SHAPE},node={SHAPE},nodes={SHAPE}:segment=\d+:window=\d+(:streams=(?P<streams>\d+))?(:push)?")
MEMORY_KEYS = ("runtime_ipc_memory", "host_staging_memory")
BASELINE_IMPLEMENTATIONS = {0, 1}  # mpi, mpi_host_staged (runtime_records.hpp)
RESIDENT_IMPLEMENTATION = 15  # runtime:resident


def memory_problems(db):
    """GPU memory kept by IPC mappings and pinned staging memory, both freed by MPI_Finalize."""
    problems, peaks = [], []
    for key, value in db.execute(
            f"SELECT key, value FROM run WHERE key IN ({','.join('?' * len(MEMORY_KEYS))})", MEMORY_KEYS):
        match = re.search(r"([0-9.]+) \w+ after finalize", value)
        peaks.append(f"{key}: {value}")
        if match is None or float(match.group(1)) != 0:
            problems.append(f"{key} = {value!r}: not all freed at MPI_Finalize")
    return problems, peaks


def runtime_ops_problems(db):
    rows = db.execute(
        """SELECT r.rank, r.mpi_call_id, r.bytes, r.implementation, c.id, c.bytes_sent, c.implementation,
                  fr.name, fc.name, c.bytes_recv, r.algorithm, r.chunks, r.decision, r.streams
           FROM runtime_ops r LEFT JOIN mpi_calls c ON c.id = r.mpi_call_id
           JOIN functions fr ON fr.id = r.function_id LEFT JOIN functions fc ON fc.id = c.function_id""").fetchall()
    implementations = {}
    for rank, call_id, _, implementation, *_ in rows:
        implementations.setdefault((rank, call_id), set()).add(implementation)
    problems = []
    for (rank, call_id, bytes_, implementation, found, sent, call_implementation, function, call_function, received,
         algorithm, chunks, decision, streams) in rows:
        if found is None:
            problems.append(f"rank {rank}: runtime_ops row of call {call_id} ({function}) has no mpi_calls row")
        elif function != call_function:
            problems.append(f"rank {rank}: runtime_ops row of call {call_id} is {function}, the call {call_function}")
        elif (call_implementation not in implementations[(rank, call_id)]
              and function not in POSTED_RECEIVES | POSTED_COLLECTIVES):
            problems.append(f"rank {rank}: call {call_id} ({function}) stored implementation {call_implementation}, "
                            f"its runtime_ops rows {sorted(implementations[(rank, call_id)])}")
        elif function in {"MPI_Allreduce", "MPI_Iallreduce"} and bytes_ != sent:
            problems.append(f"rank {rank}: runtime_ops row of call {call_id}: bytes {bytes_}, the call {sent}")
        elif function in ROOTED and bytes_ != max(sent, received):
            problems.append(f"rank {rank}: runtime_ops row of call {call_id} ({function}): bytes {bytes_}, "
                            f"the call sent {sent} and received {received}")
        elif algorithm == "staged" and (decision != "runtime" or implementation not in BASELINE_IMPLEMENTATIONS):
            problems.append(f"rank {rank}: runtime_ops row of call {call_id} ({function}): the staged baseline "
                            f"recorded as decision {decision!r}, implementation {implementation}")
        elif algorithm == "resident" and (decision != "runtime" or implementation != RESIDENT_IMPLEMENTATION
                                          or streams != 1 or chunks != 0):
            problems.append(f"rank {rank}: runtime_ops row of call {call_id} ({function}): the resident kernel "
                            f"recorded as decision {decision!r}, implementation {implementation}, "
                            f"{streams} streams, {chunks} chunks")
        elif algorithm == "resident":
            pass  # one kernel per rank, no tree and no segments
        elif function in ROOTED and decision == "runtime" and (not TREE_ALGORITHM.fullmatch(algorithm) or chunks < 1):
            problems.append(f"rank {rank}: runtime_ops row of call {call_id} ({function}): algorithm {algorithm!r}, "
                            f"{chunks} segments")
        elif function in ROOTED and decision == "runtime" and not (
                1 <= streams <= int(TREE_ALGORITHM.fullmatch(algorithm).group("streams") or 1)):
            problems.append(f"rank {rank}: runtime_ops row of call {call_id} ({function}): {streams} streams, "
                            f"its algorithm {algorithm!r}")
    return problems, len(rows)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    db = sqlite3.connect(argv[1])
    logs = sorted(Path(argv[2]).glob("rank-*.tsv"))
    if not logs:
        sys.exit(f"check_rows.py: no rank-*.tsv in {argv[2]}")
    problems, calls = [], 0
    for log in logs:
        rank = int(log.stem.split("-")[1])
        expected = logged_rows(log, problems)
        calls += len(expected)
        problems += compare_rank(db, rank, expected)[:20]
    ops_problems, ops_rows = runtime_ops_problems(db)
    problems += ops_problems[:20]
    memory, peaks = memory_problems(db)
    problems += memory
    for problem in problems:
        print(f"check_rows: {problem}")
    print(f"check_rows: {calls} logged calls on {len(logs)} ranks, {ops_rows} runtime_ops rows, "
          f"{len(problems)} differences{''.join('; ' + p for p in peaks)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
