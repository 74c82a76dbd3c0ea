"""Notebook access to commlens databases: pandas DataFrames of a run's calls, training steps, NCCL
calls, CUDA copies and kernels, and findings, with names resolved (functions, communicators,
datatypes, copy paths) and units in the column names (``_ns``, ``bytes``, ``_gb_per_s``).

    import commlens
    run = commlens.open_run("out")            # a run's output directory, or its commlens.sqlite
    run.findings()                            # what is wrong, most costly first
    run.calls().groupby("function").duration_ns.sum()

Calls, NCCL calls, copies and kernels come straight from the database (SQLite, read-only). Steps and
findings come from ``commlens report --format json``, so that they are the report's own: the
``commlens`` command is taken from ``$COMMLENS_CLI``, else from ``PATH``.
"""

import json
import os
import shutil
import sqlite3
import subprocess

import pandas as pd

__all__ = ["Run", "open_run"]

_CALLS_SQL = """
SELECT c.id, c.rank, c.thread, f.name AS function, c.start_ns, c.end_ns, c.end_ns - c.start_ns AS duration_ns,
       c.bytes_sent, c.bytes_recv, c.peer, c.tag, c.comm_id, c.root, c.request_id,
       b.name AS buffer_location, i.name AS implementation, c.phase, d.name AS datatype
FROM mpi_calls c JOIN functions f ON f.id = c.function_id
LEFT JOIN buffer_locations b ON b.id = c.buffer_location
LEFT JOIN implementations i ON i.id = c.implementation
LEFT JOIN datatypes d ON d.id = c.datatype
WHERE (? IS NULL OR (c.id >= ? << 46 AND c.id < (? + 1) << 46))
ORDER BY c.id
"""

_NCCL_SQL = """
SELECT n.call_id, n.rank, f.name AS function, m.start_ns, m.end_ns, m.end_ns - m.start_ns AS duration_ns,
       m.bytes_sent, m.bytes_recv, m.comm_id, d.name AS datatype, o.name AS op, n.stream, n.root,
       n.peer AS nccl_peer, member.rank AS peer_rank, n.group_depth
FROM nccl_calls n JOIN mpi_calls m ON m.id = n.call_id JOIN functions f ON f.id = m.function_id
LEFT JOIN nccl_datatypes d ON d.id = n.datatype LEFT JOIN nccl_ops o ON o.id = n.op
LEFT JOIN communicators member ON member.id = m.comm_id AND member.local_rank = n.peer
ORDER BY n.call_id
"""

_COPIES_SQL = """
SELECT c.rank, c.start_ns, c.end_ns, c.end_ns - c.start_ns AS duration_ns, c.device, c.src_device,
       c.dst_device, c.src_kind, c.dst_kind, c.bytes, c.stream, c.copy_kind, c.path, c.link, c.mpi_call_id,
       f.name AS mpi_function
FROM cuda_copies c LEFT JOIN mpi_calls m ON m.id = c.mpi_call_id LEFT JOIN functions f ON f.id = m.function_id
ORDER BY c.rank, c.start_ns
"""

_KERNELS_SQL = """
SELECT k.rank, k.start_ns, k.end_ns, k.end_ns - k.start_ns AS duration_ns, k.device, k.stream, k.name,
       k.mpi_call_id, f.name AS mpi_function
FROM cuda_kernels k LEFT JOIN mpi_calls m ON m.id = k.mpi_call_id LEFT JOIN functions f ON f.id = m.function_id
ORDER BY k.rank, k.start_ns
"""

_STEP_COLUMNS = ["phase", "ranks", "start_ns", "duration_ns", "mpi_ns", "calls", "allreduce_calls",
                 "allreduce_bytes"]
_FINDING_COLUMNS = ["id", "rule", "title", "cost_ns", "cost_share", "cost_base", "measure", "measured",
                    "threshold", "unit", "evidence", "query", "view", "advice"]


def open_run(path, cli=None):
    """Opens a run: its output directory (the commlens.sqlite in it) or a database file."""
    return Run(path, cli)


class Run:
    """One commlens database, opened read-only."""

    def __init__(self, path, cli=None):
        path = os.fspath(path)
        if os.path.isdir(path):
            path = os.path.join(path, "commlens.sqlite")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: no such commlens database")
        self.path = path
        self._cli = cli
        self._connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self._report = None

    def close(self):
        self._connection.close()

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()

    def calls(self, rank=None):
        """Every traced call (trace mode; empty in summary mode), with its function, communicator,
        buffer location, implementation and datatype by name. `rank` keeps one rank's calls."""
        frame = self._query(_CALLS_SQL, (rank, rank, rank), "mpi_calls")
        frame.insert(frame.columns.get_loc("comm_id") + 1, "communicator",
                     frame["comm_id"].map(self._communicator_labels()))
        return frame

    def nccl_calls(self):
        """NCCL calls (trace mode) with datatype and op by name and the peer's run rank."""
        frame = self._query(_NCCL_SQL, (), "nccl_calls")
        frame.insert(frame.columns.get_loc("comm_id") + 1, "communicator",
                     frame["comm_id"].map(self._communicator_labels()))
        return frame

    def copies(self):
        """CUDA copies with their path, the MPI or NCCL function that made them and their bandwidth."""
        frame = self._query(_COPIES_SQL, (), "cuda_copies")
        frame["bandwidth_gb_per_s"] = frame["bytes"] / frame["duration_ns"].where(frame["duration_ns"] > 0)
        return frame

    def kernels(self):
        """CUDA kernels with the MPI or NCCL function that launched them."""
        return self._query(_KERNELS_SQL, (), "cuda_kernels")

    def steps(self):
        """Training steps as the report counts them: one row per step (MPI_Pcontrol(2) phase), its
        time (the slowest rank's), its time in MPI (mean of ranks), calls and allreduce traffic."""
        steps = self.report().get("training_steps", {}).get("steps", [])
        return pd.DataFrame(steps, columns=_STEP_COLUMNS)

    def findings(self):
        """What is wrong in the run, most costly first: one row per finding, `evidence` a list."""
        return pd.DataFrame(self.report().get("findings", []), columns=_FINDING_COLUMNS)

    def report(self):
        """The whole report as `commlens report --format json` gives it (read once)."""
        if self._report is None:
            command = [self._commlens(), "report", "--format", "json", self.path]
            result = subprocess.run(command, capture_output=True, text=True, check=False)
            if result.returncode != 0:
                raise RuntimeError(f"{' '.join(command)} failed: {result.stderr.strip()}")
            self._report = json.loads(result.stdout)
        return self._report

    def _commlens(self):
        cli = self._cli or os.environ.get("COMMLENS_CLI") or shutil.which("commlens")
        if not cli:
            raise RuntimeError("no commlens command: set COMMLENS_CLI or put commlens on PATH")
        return cli

    def _has_table(self, name):
        row = self._connection.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ? AND type IN ('table', 'view')", (name,)).fetchone()
        return row is not None

    def _query(self, sql, parameters, table):
        # Files without the table (no GPU, no NCCL, an older commlens) give an empty frame.
        if not self._has_table(table):
            return pd.DataFrame(columns=_columns_of(sql))
        return pd.read_sql_query(sql, self._connection, params=parameters)

    def _communicator_labels(self):
        # The report's names ("MPI_COMM_WORLD", "size 2 from MPI_Comm_split of MPI_COMM_WORLD").
        return {int(c["id"]): c["label"] for c in self.report().get("communicators", [])}


def _columns_of(sql):
    """The result columns a query names (its `AS` names, else the column's own), for empty frames."""
    select = sql.split("FROM", 1)[0].replace("SELECT", "", 1)
    columns = []
    for part in select.split(","):
        words = part.split()
        columns.append(words[-1].split(".")[-1])
    return columns
