"""A notebook-style look at one commlens run with pandas (python/commlens.py), cell by cell as in
Jupyter or VS Code (`# %%` starts a cell). Run it whole on a run's output directory:

    PYTHONPATH=python COMMLENS_CLI=build/cli/commlens /usr/bin/python3 examples/notebook_analysis.py out

Each cell answers one question: what is wrong, where the time in MPI goes, what a training step
costs, who sends to whom, and (on GPUs) which copy paths are slow.
"""

# %% Open the run
import sys

import pandas as pd

import commlens

pd.set_option("display.width", 160)
pd.set_option("display.max_colwidth", 80)
run = commlens.open_run(sys.argv[1] if len(sys.argv) > 1 else "commlens-output")

# %% What is wrong, most costly first
findings = run.findings()
if findings.empty:
    print("no findings")
for finding in findings.itertuples():
    print(f"{finding.id}: {finding.title}\n  cost {finding.cost_ns / 1e6:.1f} ms, "
          f"{finding.cost_share:.1%} of {finding.cost_base}\n  try: {finding.advice}")

# %% Where the time in MPI goes (trace mode: every call)
calls = run.calls()
if not calls.empty:
    by_function = calls.groupby("function").agg(calls=("id", "size"), time_ms=("duration_ns", "sum"),
                                                bytes_sent=("bytes_sent", "sum"))
    by_function["time_ms"] /= 1e6
    print(by_function.sort_values("time_ms", ascending=False).head(10))

# %% The slowest calls, with their communicator by name
if not calls.empty:
    print(calls.nlargest(5, "duration_ns")[["rank", "function", "communicator", "bytes_sent", "duration_ns"]])

# %% Time per training step: the first step is a warm-up, so look at the median
steps = run.steps()
if not steps.empty:
    print(steps[["phase", "duration_ns", "mpi_ns"]].describe())

# %% Who sends to whom: bytes from rank to rank, point-to-point
if not calls.empty:
    sends = calls[(calls.peer >= 0) & (calls.bytes_sent > 0)]
    print(sends.pivot_table(index="rank", columns="peer", values="bytes_sent", aggfunc="sum", fill_value=0))

# %% GPU copy paths and their bandwidth, and the NCCL calls
copies = run.copies()
if not copies.empty:
    print(copies.groupby(["path", "src_kind", "dst_kind"]).agg(copies=("bytes", "size"), bytes=("bytes", "sum"),
                                                              gb_per_s=("bandwidth_gb_per_s", "median")))
nccl = run.nccl_calls()
if not nccl.empty:
    print(nccl.groupby(["function", "datatype"]).agg(calls=("call_id", "size"), bytes=("bytes_sent", "sum")))
