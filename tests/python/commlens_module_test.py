"""python/commlens.py over a real run: examples/finding_patterns churn (5 training steps on 4 ranks,
each a communicator duplicated, a vector datatype committed and one exchange between pairs) in trace
mode. Its calls are known exactly; the GPU and NCCL tables, empty on a CPU run, are checked on a copy
of the same database with rows of known values added. The example script runs on it too.

Environment (set by tests/python/CMakeLists.txt): COMMLENS_CLI, COMMLENS_FINDING_PATTERNS,
COMMLENS_MPIRUN, COMMLENS_NOTEBOOK_EXAMPLE, and PYTHONPATH with python/.
"""

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

import commlens

RANKS = 4
STEPS = 5
SENDRECV_BYTES = 8  # one element of MPI_Type_vector(2, 1, 2, MPI_INT)


def profile_churn(directory):
    output = os.path.join(directory, "out")
    command = [os.environ["COMMLENS_CLI"], "run", "--quiet", "--mode", "trace", "--output", output, "--",
               os.environ["COMMLENS_MPIRUN"], "-np", str(RANKS), "--oversubscribe",
               os.environ["COMMLENS_FINDING_PATTERNS"], "churn", str(STEPS)]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    return output


class CommlensModule(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix="commlens-python-")
        cls.output = profile_churn(cls.directory)
        cls.profiled = commlens.open_run(cls.output)

    @classmethod
    def tearDownClass(cls):
        cls.profiled.close()

    def test_calls_hold_every_call_of_the_program_with_names_resolved(self):
        calls = self.profiled.calls()
        per_function = calls.groupby("function").size()
        for function, per_rank in [("MPI_Comm_dup", STEPS), ("MPI_Type_commit", STEPS), ("MPI_Sendrecv", STEPS),
                                   ("MPI_Comm_free", STEPS), ("MPI_Pcontrol", STEPS + 1), ("MPI_Barrier", 1)]:
            self.assertEqual(per_function[function], RANKS * per_rank, function)
        exchanges = calls[calls.function == "MPI_Sendrecv"]
        self.assertTrue((exchanges.bytes_sent == SENDRECV_BYTES).all())
        self.assertEqual(set(exchanges.communicator), {"size 4 from MPI_Comm_dup of MPI_COMM_WORLD"})
        self.assertEqual(set(exchanges.datatype), {"derived"})
        self.assertEqual(set(exchanges.implementation), {"mpi"})
        self.assertTrue((calls.duration_ns == calls.end_ns - calls.start_ns).all())
        self.assertEqual(set(calls[calls.function == "MPI_Barrier"].communicator), {"MPI_COMM_WORLD"})

    def test_calls_of_one_rank_are_that_ranks_only(self):
        calls = self.profiled.calls(rank=2)
        self.assertEqual(set(calls["rank"]), {2})
        self.assertEqual((calls.function == "MPI_Sendrecv").sum(), STEPS)

    def test_steps_are_the_reports_training_steps(self):
        steps = self.profiled.steps()
        self.assertEqual(list(steps.phase), list(range(1, STEPS + 1)))
        self.assertTrue((steps.ranks == RANKS).all())
        self.assertTrue((steps.duration_ns >= 20_000_000).all())  # each step sleeps 20 ms
        self.assertTrue((steps.mpi_ns < steps.duration_ns).all())

    def test_findings_name_the_churn_with_its_figures(self):
        findings = self.profiled.findings().set_index("id")
        for churn in ["communicator-churn@steps", "datatype-churn@steps"]:
            self.assertIn(churn, findings.index)
            self.assertEqual(findings.loc[churn, "measured"], 1.0)
            self.assertEqual(findings.loc[churn, "threshold"], 1.0)
            self.assertEqual(findings.loc[churn, "unit"], "count")
            self.assertIsInstance(findings.loc[churn, "evidence"], list)

    def test_a_cpu_run_has_empty_gpu_and_nccl_frames_with_their_columns(self):
        self.assertTrue(self.profiled.copies().empty)
        self.assertIn("bandwidth_gb_per_s", self.profiled.copies().columns)
        self.assertEqual(list(self.profiled.kernels().columns),
                         ["rank", "start_ns", "end_ns", "duration_ns", "device", "stream", "name", "mpi_call_id",
                          "mpi_function"])
        self.assertIn("peer_rank", self.profiled.nccl_calls().columns)

    def test_copies_kernels_and_nccl_calls_resolve_their_calls_and_names(self):
        database = os.path.join(self.directory, "with-gpu.sqlite")
        shutil.copy(os.path.join(self.output, "commlens.sqlite"), database)
        with sqlite3.connect(database) as connection:
            exchange = connection.execute(
                "SELECT id, comm_id FROM mpi_calls WHERE function_id = (SELECT id FROM functions "
                "WHERE name = 'MPI_Sendrecv') ORDER BY id LIMIT 1").fetchone()
            connection.execute(
                "INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_device, dst_device, src_kind, "
                "dst_kind, bytes, stream, copy_kind, path, link, mpi_call_id, correlation_id) VALUES "
                "(0, 1000, 1500, 0, 0, -1, 'device', 'pageable', 1000, 7, 'DtoH', 'host_staged', NULL, ?, 1)",
                (exchange[0],))
            connection.execute(
                "INSERT INTO cuda_kernels (rank, start_ns, end_ns, device, stream, name, mpi_call_id, "
                "correlation_id) VALUES (0, 2000, 2600, 0, 7, 'ncclDevKernel_AllReduce', NULL, 2)")
            # Every database lists the NCCL functions, whether the run called NCCL or not.
            allreduce = connection.execute("SELECT id FROM functions WHERE name = 'nccl:AllReduce'").fetchone()[0]
            nccl_call = (0 << 46) | (5 << 36) | 1
            connection.execute(
                "INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, bytes_recv, "
                "peer, tag, comm_id, root, request_id, buffer_location, implementation, phase, datatype) VALUES "
                "(?, 0, 5, ?, 3000, 3400, 4096, 4096, -1, NULL, ?, NULL, ?, 2, 0, 0, NULL)",
                (nccl_call, allreduce, exchange[1], nccl_call))
            connection.execute("INSERT INTO nccl_calls (call_id, rank, datatype, op, stream, root, peer, "
                               "group_depth) VALUES (?, 0, 7, 0, 7, NULL, NULL, 0)", (nccl_call,))
        with commlens.open_run(database) as run:
            copy = run.copies().iloc[0]
            self.assertEqual(copy.mpi_function, "MPI_Sendrecv")
            self.assertEqual(copy.duration_ns, 500)
            self.assertAlmostEqual(copy.bandwidth_gb_per_s, 2.0)
            kernel = run.kernels().iloc[0]
            self.assertEqual((kernel["name"], kernel.duration_ns), ("ncclDevKernel_AllReduce", 600))
            nccl = run.nccl_calls().iloc[0]
            self.assertEqual((nccl.function, nccl.datatype, nccl.op), ("nccl:AllReduce", "ncclFloat32", "ncclSum"))
            self.assertEqual(nccl.communicator, "size 4 from MPI_Comm_dup of MPI_COMM_WORLD")

    def test_the_example_notebook_prints_the_findings_of_a_run(self):
        result = subprocess.run([sys.executable, os.environ["COMMLENS_NOTEBOOK_EXAMPLE"], self.output],
                                capture_output=True, text=True, check=True, timeout=300)
        self.assertIn("communicator-churn@steps", result.stdout)
        self.assertIn("MPI_Sendrecv", result.stdout)


if __name__ == "__main__":
    unittest.main()
