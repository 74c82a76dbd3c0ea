#!/usr/bin/env python3
"""PyTorch DDP with world size 1 on one GPU, profiled by commlens: the nccl:AllReduce bytes
recorded in each training step equal DDP's gradient buckets.

usage: ddp_buckets_check.py LIBCOMMLENS [--steps N] [--bucket-cap-mb MB]

The job runs in a child process with libcommlens.so preloaded and no MPI at all (torch's env://
rendezvous), so the first NCCL call starts the profiler and the process's exit merges the run.
The model is fixed (three Linear layers of float32, sizes below) and the buckets are read from
DDP's reducer (its logging data), with DDP's bucketing rule computed from the parameters as a
cross-check: parameters in reverse order, a bucket closes once it holds at least its cap (the first
bucket's cap is torch.distributed._DEFAULT_FIRST_BUCKET_BYTES, the others bucket_cap_mb).
Exit status 0: every step matches; 1: a mismatch or a failed job; 77: skipped (no torch, no CUDA
device, torch without NCCL), with the reason printed.
"""
import argparse
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

SKIPPED = 77
LAYERS = [(1000, 2000), (2000, 3000), (3000, 10)]  # Linear(in, out): weights and biases in float32
BATCH = 64


def skip(reason):
    print(f"ddp_buckets_check: skipped: {reason}")
    sys.exit(SKIPPED)


def rule_buckets(parameter_bytes, first_cap, cap):
    """DDP's assignment of gradients (given in registration order) to buckets, as byte totals."""
    buckets, current = [], 0
    for size in reversed(parameter_bytes):
        current += size
        if current >= (first_cap if not buckets else cap):
            buckets.append(current)
            current = 0
    if current:
        buckets.append(current)
    return buckets


def sizes_from_logging(data, key):
    text = data.get(key) if isinstance(data, dict) else None
    if not text:
        return None
    return [int(part) for part in str(text).replace(",", " ").split()]


def child(steps, bucket_cap_mb):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.manual_seed(0)
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=0, world_size=1)
    layers = []
    for number, (inputs, outputs) in enumerate(LAYERS):
        layers.append(torch.nn.Linear(inputs, outputs))
        if number + 1 < len(LAYERS):
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).cuda()
    ddp = DistributedDataParallel(model, device_ids=[0], bucket_cap_mb=bucket_cap_mb)
    optimiser = torch.optim.SGD(ddp.parameters(), lr=0.01)
    data = torch.randn(BATCH, LAYERS[0][0], device="cuda")
    windows = []
    for _ in range(steps):
        torch.cuda.synchronize()
        began = time.monotonic_ns()
        ddp(data).square().mean().backward()  # DDP's bucket allreduces run and finish in here
        torch.cuda.synchronize()
        windows.append([began, time.monotonic_ns()])
        optimiser.step()
        optimiser.zero_grad()
    logging = ddp._get_ddp_logging_data()
    parameter_bytes = [p.numel() * p.element_size() for p in model.parameters()]
    print("DDP_BUCKETS " + json.dumps({
        "windows": windows,
        "bucket_sizes": sizes_from_logging(logging, "bucket_sizes"),
        "rebuilt_bucket_sizes": sizes_from_logging(logging, "rebuilt_bucket_sizes"),
        "rule": rule_buckets(parameter_bytes, dist._DEFAULT_FIRST_BUCKET_BYTES, bucket_cap_mb * 1024 * 1024),
        "nccl_version": ".".join(str(part) for part in torch.cuda.nccl.version()),
    }), flush=True)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def recorded_steps(database, windows):
    connection = sqlite3.connect(database)
    init_ns = connection.execute("SELECT init_ns FROM ranks WHERE rank = 0").fetchone()[0]
    steps = []
    for began, ended in windows:
        rows = connection.execute(
            "SELECT m.bytes_sent FROM mpi_calls m JOIN functions f ON f.id = m.function_id "
            "WHERE f.name = 'nccl:AllReduce' AND m.start_ns >= ? AND m.end_ns <= ? ORDER BY m.start_ns",
            (began - init_ns, ended - init_ns)).fetchall()
        steps.append([row[0] for row in rows])
    details = connection.execute(
        "SELECT count(*), group_concat(DISTINCT d.name), group_concat(DISTINCT o.name) FROM nccl_calls n "
        "JOIN mpi_calls m ON m.id = n.call_id JOIN functions f ON f.id = m.function_id "
        "LEFT JOIN nccl_datatypes d ON d.id = n.datatype LEFT JOIN nccl_ops o ON o.id = n.op "
        "WHERE f.name = 'nccl:AllReduce'").fetchone()
    connection.close()
    return steps, details


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library", help="libcommlens.so")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--bucket-cap-mb", type=int, default=4)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.steps, args.bucket_cap_mb)
        return 0
    try:
        import torch
        import torch.distributed as dist
    except ImportError as error:
        skip(f"no torch ({error})")
    if not torch.cuda.is_available():
        skip("no CUDA device")
    if not dist.is_available() or not dist.is_nccl_available():
        skip("torch without NCCL")
    output = tempfile.mkdtemp(prefix="commlens-ddp-")
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("OMPI_", "PMI_", "PMIX_"))}  # not an MPI job
    environment.update(LD_PRELOAD=args.library, COMMLENS_OUTPUT=output, COMMLENS_MODE="trace",
                       COMMLENS_COLLECTORS="all", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()),
                       RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
    command = [sys.executable, os.path.abspath(__file__), args.library, "--child", "--steps", str(args.steps),
               "--bucket-cap-mb", str(args.bucket_cap_mb)]
    job = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=600)
    sys.stderr.write(job.stderr[-4000:])
    lines = [line for line in job.stdout.splitlines() if line.startswith("DDP_BUCKETS ")]
    if job.returncode != 0 or not lines:
        print(f"ddp_buckets_check: the DDP job failed (exit {job.returncode})\n{job.stdout}")
        return 1
    facts = json.loads(lines[-1][len("DDP_BUCKETS "):])
    database = os.path.join(output, "commlens.sqlite")
    if not os.path.exists(database):
        print(f"ddp_buckets_check: no merged database in {output}")
        return 1
    steps, details = recorded_steps(database, facts["windows"])
    first = facts["bucket_sizes"] or facts["rule"]
    later = facts["rebuilt_bucket_sizes"] or first
    print(f"ddp_buckets_check: NCCL {facts['nccl_version']}, bucket_cap_mb {args.bucket_cap_mb}: DDP buckets "
          f"{first} (rebuilt {facts['rebuilt_bucket_sizes']}), rule {facts['rule']}; "
          f"nccl_calls of AllReduce: {details}")
    failures = 0
    for number, recorded in enumerate(steps):
        expected = first if number == 0 else later
        verdict = "ok" if sorted(recorded) == sorted(expected) else "MISMATCH"
        failures += verdict != "ok"
        print(f"ddp_buckets_check: step {number}: recorded nccl:AllReduce bytes {recorded}, "
              f"DDP buckets {expected}: {verdict}")
    if sorted(first) != sorted(facts["rule"]):
        print(f"ddp_buckets_check: note: the reducer's buckets {first} differ from the rule {facts['rule']}")
    if details[0] == 0 or details[1] != "ncclFloat32":
        print(f"ddp_buckets_check: nccl_calls rows of the allreduces missing or not float32: {details}")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
