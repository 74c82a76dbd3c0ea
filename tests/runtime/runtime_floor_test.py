"""bench/runtime_floor.py on a hand-made trace database: known calls and GPU operations give a known
breakdown. usage: runtime_floor_test.py PATH/TO/runtime_floor.py"""
import importlib.util
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

SCRIPT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../bench/runtime_floor.py")
spec = importlib.util.spec_from_file_location("runtime_floor", SCRIPT)
runtime_floor = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runtime_floor)

# The columns bench/runtime_floor.py reads, as the merged database names them (docs/schema.md).
PHASE_COLUMNS = ", publish_ns INTEGER, map_ns INTEGER, agree_ns INTEGER, barrier_ns INTEGER"
SCHEMA = """
CREATE TABLE run (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE functions (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE mpi_calls (id INTEGER PRIMARY KEY, rank INTEGER, function_id INTEGER, start_ns INTEGER, end_ns INTEGER);
CREATE TABLE runtime_ops (rank INTEGER, mpi_call_id INTEGER, function_id INTEGER, bytes INTEGER,
                          decision TEXT, algorithm TEXT{phase_columns});
CREATE TABLE cuda_kernels (rank INTEGER, start_ns INTEGER, end_ns INTEGER, mpi_call_id INTEGER);
CREATE TABLE cuda_copies (rank INTEGER, start_ns INTEGER, end_ns INTEGER, mpi_call_id INTEGER);
CREATE TABLE cuda_memsets (rank INTEGER, start_ns INTEGER, end_ns INTEGER, mpi_call_id INTEGER);
CREATE TABLE cuda_synchronizations (rank INTEGER, start_ns INTEGER, end_ns INTEGER, mpi_call_id INTEGER);
CREATE TABLE ipc_events (rank INTEGER, start_ns INTEGER, end_ns INTEGER, mpi_call_id INTEGER);
INSERT INTO run VALUES ('cuda_collectors', 'on');
INSERT INTO functions VALUES (7, 'MPI_Allreduce');
"""


class Trace:
    """Builds the database: calls of MPI_Allreduce at 8 bytes, ids numbered per rank in call order."""

    def __init__(self, path, phase_columns=True):
        self.db = sqlite3.connect(path)
        self.db.executescript(SCHEMA.format(phase_columns=PHASE_COLUMNS if phase_columns else ""))
        self.phase_columns = phase_columns
        self.next_id = {}

    def call(self, rank, start, end, decision, algorithm, phases=(None, None, None, None)):
        """phases: publish_ns, map_ns, agree_ns, barrier_ns."""
        call_id = (rank << 46) + self.next_id.setdefault(rank, 1)
        self.next_id[rank] += 1
        self.db.execute("INSERT INTO mpi_calls VALUES (?, ?, 7, ?, ?)", (call_id, rank, start, end))
        values = (rank, call_id, decision, algorithm) + (phases if self.phase_columns else ())
        marks = ", ?" * (len(values) - 4)
        self.db.execute(f"INSERT INTO runtime_ops VALUES (?, ?, 7, 8, ?, ?{marks})", values)
        return call_id

    def row(self, table, rank, start, end, call_id):
        self.db.execute(f"INSERT INTO {table} VALUES (?, ?, ?, ?)", (rank, start, end, call_id))

    def baseline(self, rank, start, total):
        """A host-staged turn: its copy down 2-5 us after the start, its copy up ending 3 us before the end."""
        call_id = self.call(rank, start, start + total, "ab_baseline", "host_staged", (0, 0, 0, 0))
        self.row("cuda_copies", rank, start + 2000, start + 5000, call_id)
        self.row("cuda_copies", rank, start + total - 8000, start + total - 3000, call_id)


class RuntimeFloorTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.directory.name, "commlens.sqlite")
        self.write_trace(self.path, phase_columns=True)

    @staticmethod
    def write_trace(path, phase_columns):
        trace = Trace(path, phase_columns)
        for rank in (0, 1):  # the first turn of each path opens IPC handles: --skip 1 leaves it out
            warm_up = trace.call(rank, 0, 900_000, "runtime", "shared_gpu")
            trace.row("ipc_events", rank, 1000, 800_000, warm_up)
            trace.row("cuda_kernels", rank, 850_000, 860_000, warm_up)
            trace.baseline(rank, 1_000_000, 500_000)
        # Rank 0 leads the GPU: a kernel and two copies (the first overlapping it), then waits.
        leader = trace.call(0, 2_001_000, 2_036_000, "runtime", "shared_gpu", (3000, 500, 6000, 14_000))
        trace.row("cuda_kernels", 0, 2_013_000, 2_017_000, leader)
        trace.row("cuda_copies", 0, 2_016_000, 2_018_000, leader)
        trace.row("cuda_memsets", 0, 2_020_000, 2_021_000, leader)
        trace.row("cuda_synchronizations", 0, 2_021_000, 2_035_000, leader)
        trace.row("cuda_kernels", 0, 2_040_000, 2_041_000, None)  # outside any call: not the call's
        # Rank 1 only waits at the barriers.
        trace.call(1, 2_001_500, 2_036_500, "runtime", "shared_gpu", (2500, 0, 20_000, 34_000))
        for rank, totals in ((0, (40_000, 50_000, 60_000)), (1, (45_000, 55_000, 65_000))):
            for turn, total in enumerate(totals):
                trace.baseline(rank, 3_000_000 + turn * 100_000, total)
        trace.db.commit()
        trace.db.close()

    def tearDown(self):
        self.directory.cleanup()

    def breakdowns(self, skip=1):
        with sqlite3.connect(self.path) as db:
            return runtime_floor.breakdowns(db, skip)

    def test_leader_call_splits_into_phases(self):
        rows, _ = self.breakdowns()
        leader = rows[("allreduce", 8, "runtime", "shared_gpu", 0)]
        self.assertEqual(leader["calls"], 1)
        self.assertEqual(leader["no_gpu"], 0)
        self.assertAlmostEqual(leader["total"], 35.0)
        self.assertAlmostEqual(leader["before_gpu"], 12.0)  # start to the kernel
        self.assertAlmostEqual(leader["gpu"], 6.0)  # kernel and copy overlap: 13-18 us, memset 1 us
        self.assertAlmostEqual(leader["gpu_gaps"], 2.0)  # 18-20 us
        self.assertAlmostEqual(leader["after_gpu"], 15.0)  # memset's end to the call's end
        self.assertAlmostEqual(leader["cuda_sync"], 14.0)
        self.assertAlmostEqual(leader["ipc_open"], 0.0)
        self.assertAlmostEqual(leader["publish"], 3.0)
        self.assertAlmostEqual(leader["map"], 0.5)
        self.assertAlmostEqual(leader["agree"], 6.0)
        self.assertAlmostEqual(leader["barriers"], 8.0)  # barrier_ns without the agreement's

    def test_rank_without_gpu_work_has_no_phases(self):
        rows, _ = self.breakdowns()
        waiter = rows[("allreduce", 8, "runtime", "shared_gpu", 1)]
        self.assertEqual((waiter["calls"], waiter["no_gpu"]), (1, 1))
        self.assertAlmostEqual(waiter["total"], 35.0)
        self.assertIsNone(waiter.get("before_gpu"))
        self.assertAlmostEqual(waiter["agree"], 20.0)
        self.assertAlmostEqual(waiter["barriers"], 14.0)

    def test_skip_keeps_the_first_calls(self):
        rows, _ = self.breakdowns(skip=0)
        leader = rows[("allreduce", 8, "runtime", "shared_gpu", 0)]
        self.assertEqual(leader["calls"], 2)
        self.assertAlmostEqual(leader["ipc_open"], (799_000 + 0) / 2 / 1000)
        self.assertAlmostEqual(leader["total"], (900_000 + 35_000) / 2 / 1000)

    def test_baseline_medians_and_slowest_rank(self):
        rows, slowest = self.breakdowns()
        staged = rows[("allreduce", 8, "baseline", "host_staged", 0)]
        self.assertEqual(staged["calls"], 3)
        self.assertAlmostEqual(staged["total"], 50.0)
        self.assertAlmostEqual(staged["before_gpu"], 2.0)
        self.assertAlmostEqual(staged["gpu"], 8.0)
        self.assertAlmostEqual(staged["gpu_gaps"], 37.0)
        self.assertAlmostEqual(staged["after_gpu"], 3.0)
        self.assertAlmostEqual(staged["agree"], 0.0)  # the baseline agrees on nothing
        self.assertAlmostEqual(slowest[("allreduce", 8, "baseline")], 55.0)
        self.assertAlmostEqual(slowest[("allreduce", 8, "runtime")], 35.0)

    def test_command_prints_both_tables(self):
        result = subprocess.run([sys.executable, SCRIPT, self.path], capture_output=True, text=True, check=True)
        lines = result.stdout.splitlines()
        self.assertIn(
            "allreduce        8 runtime  shared_gpu            0     1      0       35.0       12.0        6.0"
            "        2.0       15.0       14.0        0.0        3.0        6.0        0.5        8.0",
            lines,
        )
        self.assertIn("allreduce        8       35.0       55.0      1.6", lines)

    def test_file_without_phase_columns_has_blank_phases(self):
        older = os.path.join(self.directory.name, "older.sqlite")
        self.write_trace(older, phase_columns=False)
        with sqlite3.connect(older) as db:
            rows, _ = runtime_floor.breakdowns(db, 1)
        leader = rows[("allreduce", 8, "runtime", "shared_gpu", 0)]
        self.assertAlmostEqual(leader["before_gpu"], 12.0)
        self.assertIsNone(leader.get("agree"))

    def test_command_refuses_a_database_without_runtime_rows(self):
        empty = os.path.join(self.directory.name, "empty.sqlite")
        sqlite3.connect(empty).close()
        result = subprocess.run([sys.executable, SCRIPT, empty], capture_output=True, text=True)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("no runtime_ops", result.stderr)


if __name__ == "__main__":
    unittest.main()
