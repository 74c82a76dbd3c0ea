#!/usr/bin/env python3
"""PyTorch DDP and FSDP jobs on several GPUs, one rank per GPU, profiled by `commlens run` under
mpirun and under torchrun (examples/dl/ddp_train.py), checked against what the model says the
communication must be.

usage: dl_jobs_check.py COMMLENS_CLI [--gpus N ...] [--python PYTHON] [--keep DIR] [--only TEXT]

Each job runs 2 warm-up and 8 timed steps in trace mode with the default collectors and
COMMLENS_KERNELS=steps, so the kernel records cover steps 6 to 8; one more torchrun DDP job runs
without kernel records, as a user does by default, so CUPTI is never attached. For each job:
- the merged database holds every rank;
- the steps are found: from the NVTX `step` ranges (torchrun, and mpirun without --pcontrol) or
  from MPI_Pcontrol(2), one phase per step;
- DDP: each step's nccl:AllReduce calls are DDP's buckets (count and bytes per rank); the set-up
  broadcasts move the model's parameters and buffers once (ncclBcast calls ncclBroadcast inside
  NCCL: counted twice, they would be twice that);
- FSDP: each step's nccl:ReduceScatter bytes are the units' flat parameters once, the
  nccl:AllGather bytes once more for every unit that is not the root (gathered again for backward);
- every NCCL collective call has its GPU span (device_spans), every one in a step whose kernels
  were recorded and outside a group has its kernels tied to it, and each tied kernel lies inside
  its call's span (the CUPTI and event clocks agree);
- NCCL's own NVTX ranges are not stored as the program's;
- the report's training steps give the GPU breakdown for steps 6-8 and the NCCL GPU time.
Exit status 0: all jobs pass; 1: a failure; 77: skipped (fewer than 2 GPUs, no torch), reason printed.
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

SKIPPED = 77
HERE = os.path.dirname(os.path.abspath(__file__))
TRAINER = os.path.join(HERE, "..", "..", "examples", "dl", "ddp_train.py")
WARMUP, STEPS = 2, 8
COLLECTIVES = ("nccl:AllReduce", "nccl:AllGather", "nccl:ReduceScatter", "nccl:Broadcast", "nccl:Bcast")
SPAN_SLACK_NS = 50_000  # the two clocks' agreement allowed: anchors are good to a few microseconds


class Checks:
    def __init__(self, job):
        self.job, self.failures = job, 0

    def expect(self, condition, what):
        print(f"dl_jobs_check: {self.job}: {'ok' if condition else 'FAILED'}: {what}", flush=True)
        self.failures += 0 if condition else 1


def run_job(cli, python, launcher, gpus, wrap, model, pcontrol, kernels, mode, output):
    trainer = [TRAINER, "--model", model, "--wrap", wrap, "--steps", str(STEPS), "--warmup", str(WARMUP)]
    if model == "transformer":
        trainer += ["--batch-size", "2"]
    if launcher == "mpirun":
        command = ["mpirun", "-np", str(gpus), "--oversubscribe", python] + trainer + (["--pcontrol"] if pcontrol else [])
    else:
        command = [python, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(gpus)] + trainer
    environment = dict(os.environ, COMMLENS_KERNELS="steps" if kernels else "off")
    job = subprocess.run([cli, "run", "--quiet", "--mode", mode, "--output", output, "--"] + command,
                         capture_output=True, text=True, timeout=900, env=environment)
    lines = [line for line in job.stdout.splitlines() if line.startswith("DDP_TRAIN ")]
    if job.returncode != 0 or not lines:
        print(job.stdout[-3000:], job.stderr[-3000:])
        return None
    return json.loads(lines[-1][len("DDP_TRAIN "):])


def step_phases(db):
    """Per rank, its step phases in order (level 2)."""
    phases = {}
    for rank, phase in db.execute("SELECT rank, phase FROM phases WHERE pcontrol_level = 2 ORDER BY rank, phase"):
        phases.setdefault(rank, []).append(phase)
    return phases


def per_phase(db, function, bytes_expression):
    """(rank, phase) -> (calls, bytes) of one function; bytes_expression over call_stats' columns."""
    return {(rank, phase): (count, total) for rank, phase, count, total in db.execute(
        f"SELECT rank, phase, SUM(count), SUM({bytes_expression}) FROM call_stats "
        "WHERE function_id = (SELECT id FROM functions WHERE name = ?) GROUP BY rank, phase", (function,))}


def check_ddp(db, facts, checks, steps_of):
    first = facts["bucket_sizes"]
    later = facts["rebuilt_bucket_sizes"] or first
    calls = per_phase(db, "nccl:AllReduce", "bytes_sent")
    wrong = []
    for rank, phases in steps_of.items():
        for number, phase in enumerate(phases):
            expected = first if number == 0 else later
            got = calls.get((rank, phase), (0, 0))
            if got != (len(expected), sum(expected)):
                wrong.append((rank, number + 1, got, (len(expected), sum(expected))))
    checks.expect(not wrong, f"nccl:AllReduce calls and bytes per step are DDP's buckets {later} (wrong: {wrong[:4]})")
    broadcast = {}
    for function in ("nccl:Bcast", "nccl:Broadcast"):
        for (rank, phase), (_, total) in per_phase(db, function, "MAX(bytes_sent, bytes_recv)").items():
            if phase == 0:
                broadcast[rank] = broadcast.get(rank, 0) + total
    # DDP also broadcasts a few small things at set-up; ncclBcast counted with the ncclBroadcast it
    # calls would be twice the state.
    state = facts["state_bytes"]
    checks.expect(broadcast and all(state <= total < state + 65536 for total in broadcast.values()),
                  f"set-up broadcasts move the parameters and buffers once: {state} B and a few small ones per "
                  f"rank (recorded {broadcast})")


def check_fsdp(db, facts, checks, steps_of):
    units = facts["fsdp_units"]
    whole = sum(unit["bytes"] for unit in units)
    gathered = whole + sum(unit["bytes"] for unit in units if not unit["root"])
    gathers = per_phase(db, "nccl:AllGather", "bytes_recv")
    scatters = per_phase(db, "nccl:ReduceScatter", "bytes_sent")
    wrong = []
    for rank, phases in steps_of.items():
        for number, phase in enumerate(phases[1:], 2):  # the first step's lazy set-up may gather more
            got = (gathers.get((rank, phase), (0, 0))[1], scatters.get((rank, phase), (0, 0))[1])
            if got != (gathered, whole):
                wrong.append((rank, number, got))
    checks.expect(not wrong, f"per step {gathered} B all-gathered and {whole} B reduce-scattered "
                  f"({len(units)} FSDP units; wrong: {wrong[:4]})")


def check_gpu_spans(db, checks):
    names = ",".join(f"'{name}'" for name in COLLECTIVES)
    calls = db.execute(f"SELECT COUNT(*) FROM mpi_calls m JOIN functions f ON f.id = m.function_id "
                       f"WHERE f.name IN ({names})").fetchone()[0]
    spans = db.execute(f"SELECT COUNT(*) FROM mpi_calls m JOIN functions f ON f.id = m.function_id "
                       f"JOIN device_spans d ON d.call_id = m.id WHERE f.name IN ({names})").fetchone()[0]
    checks.expect(calls > 0 and spans == calls, f"every NCCL collective call has its GPU span ({spans} of {calls})")


def check_copy_runs(db, steps_of, checks):
    """Summary mode: DDP's gradient copies, hundreds a step, are stored as runs (cuda_copies.copies)."""
    rows, copies, timed = db.execute("SELECT COUNT(*), SUM(copies), SUM(gpu_timed) FROM cuda_copies").fetchone()
    steps = sum(len(phases) for phases in steps_of.values())
    checks.expect(copies and steps and copies / steps >= 100,
                  f"every copy counted: {copies} copies in {steps} rank steps ({copies / max(steps, 1):.0f} a step)")
    checks.expect(rows * 4 <= copies, f"runs of copies make at most a quarter as many rows ({rows} rows, "
                  f"{timed} of them timed on the GPU, for {copies} copies)")
    # commlens's own time in the runtime's calls, estimated from one call in 16 of each thread:
    # every copy but at most 15 a thread (copies, waits and allocations are all counted), allowing
    # 8 copying threads a rank (the main thread, autograd's, DDP's).
    counted, own_ns = db.execute("SELECT SUM(count), SUM(time_ns) FROM profiler_overhead "
                                 "WHERE component = 'cuda_runtime_calls'").fetchone()
    ranks = db.execute("SELECT COUNT(*) FROM ranks").fetchone()[0]
    checks.expect(counted is not None and copies is not None and counted >= copies - 15 * 8 * ranks
                  and own_ns > 0,
                  f"commlens's own time in the runtime's calls is measured: {counted} calls estimated for "
                  f"{copies} copies, {own_ns / max(counted or 1, 1):.0f} ns a call")


def check_gpu_ties(db, checks):
    names = ",".join(f"'{name}'" for name in COLLECTIVES)
    # What launches a collective's kernels: the call itself outside a group, else the ncclGroupEnd
    # that closes its group (the call before it on its thread, ids being sequential per thread).
    launchers = f"""FROM mpi_calls m JOIN functions f ON f.id = m.function_id JOIN nccl_calls n ON n.call_id = m.id
      WHERE ((f.name IN ({names}) AND n.group_depth = 0) OR (f.name = 'nccl:GroupEnd' AND n.group_depth = 1
             AND EXISTS (SELECT 1 FROM mpi_calls p JOIN functions g ON g.id = p.function_id
                         WHERE p.id = m.id - 1 AND g.name IN ({names}))))
        AND EXISTS (SELECT 1 FROM kernel_recording r WHERE r.rank = m.rank AND r.start_ns <= m.start_ns
                    AND r.end_ns >= m.end_ns)"""
    recorded = db.execute(f"SELECT COUNT(*) {launchers}").fetchone()[0]
    tied = db.execute(f"SELECT COUNT(*) {launchers} AND EXISTS (SELECT 1 FROM cuda_kernels k "
                      "WHERE k.mpi_call_id = m.id)").fetchone()[0]
    checks.expect(recorded > 0 and tied == recorded,
                  f"NCCL calls launched where kernels were recorded have their kernels ({tied} of {recorded})")
    outside = db.execute(f"""SELECT COUNT(*), MAX(MAX(d.start_ns - k.start_ns, k.end_ns - d.end_ns))
      FROM cuda_kernels k JOIN device_spans d ON d.call_id = k.mpi_call_id
      WHERE k.start_ns < d.start_ns - {SPAN_SLACK_NS} OR k.end_ns > d.end_ns + {SPAN_SLACK_NS}""").fetchone()
    total = db.execute("SELECT COUNT(*) FROM cuda_kernels k JOIN device_spans d ON d.call_id = k.mpi_call_id").fetchone()[0]
    checks.expect(total > 0 and outside[0] == 0,
                  f"tied kernels lie inside their call's GPU span ({outside[0]} of {total} outside, by up to {outside[1]} ns)")


def check_job(cli, output, facts, launcher, pcontrol, wrap, gpus, kernels, mode, checks):
    db = sqlite3.connect(os.path.join(output, "commlens.sqlite"))
    # PyTorch calls a shared libcudart: without kernel records CUPTI is never attached.
    source = db.execute("SELECT value FROM run WHERE key = 'cuda_copies_source'").fetchone()
    expected_source = "cupti" if kernels else "calls"
    checks.expect(source is not None and source[0].startswith(expected_source),
                  f"copies come from {expected_source} ({source[0] if source else 'not said'})")
    ranks = db.execute("SELECT COUNT(*) FROM ranks").fetchone()[0]
    checks.expect(ranks == gpus, f"the merged database holds every rank ({ranks} of {gpus})")
    steps_of = step_phases(db)
    counts = sorted({len(phases) for phases in steps_of.values()})
    # MPI_Pcontrol(2) once more after the last step opens the tear-down at level 2; an NVTX step
    # range's pop opens a phase at level 3.
    # A torchrun FSDP job makes its first NCCL call (the first all-gather) inside its first step: the
    # profiler starts there, so that step is not seen.
    late_start = 1 if launcher == "torchrun" and wrap == "fsdp" else 0
    expected = WARMUP + STEPS + (1 if pcontrol else 0) - late_start
    checks.expect(counts == [expected], f"{expected} level-2 phases on every rank (found {counts})")
    steps_of = {rank: phases[:WARMUP + STEPS - late_start] for rank, phases in steps_of.items()}
    if wrap == "ddp":
        check_ddp(db, facts, checks, steps_of)
    else:
        check_fsdp(db, facts, checks, steps_of)
    if mode == "trace":
        check_gpu_spans(db, checks)
    else:
        check_copy_runs(db, steps_of, checks)
    if kernels:
        check_gpu_ties(db, checks)
    nccl_ranges = db.execute("SELECT COUNT(*) FROM nvtx_ranges WHERE domain = 'NCCL' OR name LIKE 'nccl%'").fetchone()[0]
    checks.expect(nccl_ranges == 0, f"NCCL's own NVTX ranges are not the program's ({nccl_ranges} stored)")
    report = json.loads(subprocess.run([cli, "report", "--format", "json", os.path.join(output, "commlens.sqlite")],
                                       capture_output=True, text=True, check=True).stdout)
    steps = report["training_steps"]
    marked = "MPI_Pcontrol(2)" if pcontrol else "NVTX ranges named step"
    checks.expect(str(steps.get("marked_by")).startswith(marked) and len(steps["steps"]) == WARMUP + STEPS - late_start,
                  f"the report finds {WARMUP + STEPS - late_start} steps marked by {marked} "
                  f"(found {len(steps.get('steps', []))}, {steps.get('marked_by')})")
    if kernels:
        breakdown = steps.get("gpu_breakdown", {})
        window = "6-8"  # the schedule and the report both count steps from the first the profiler saw
        checks.expect(breakdown.get("steps") == window and breakdown.get("median_communication_ns", 0) > 0,
                      f"GPU breakdown from the kernels of steps {window}: {breakdown}")
    checks.expect(steps.get("median_nccl_gpu_ns", 0) > 0, f"NCCL GPU time per step {steps.get('median_nccl_gpu_ns')} ns")
    print(f"dl_jobs_check: {checks.job}: step ms {facts['step_ms']}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cli", help="the commlens command")
    parser.add_argument("--gpus", type=int, nargs="*", default=None)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--keep", help="a folder to keep each job's output folder in (else temporary)")
    parser.add_argument("--only", help="run only the jobs whose name contains this text ('no kernels')")
    args = parser.parse_args()
    try:
        import torch
    except ImportError as error:
        print(f"dl_jobs_check: skipped: no torch ({error})")
        return SKIPPED
    available = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if available < 2:
        print(f"dl_jobs_check: skipped: {available} GPU(s); the jobs need one GPU per rank and at least 2")
        return SKIPPED
    gpu_counts = args.gpus or sorted({2, min(available, 4)})
    jobs = []
    for gpus in gpu_counts:
        jobs += [("mpirun", gpus, "ddp", "resnet50", gpus != gpu_counts[0], True, "trace"),
                 ("torchrun", gpus, "ddp", "resnet50", False, True, "trace"),
                 ("torchrun", gpus, "fsdp", "transformer", False, True, "trace"),
                 ("mpirun", gpus, "fsdp", "transformer", False, True, "trace")]
    # The default collectors: no kernel records, so no CUPTI; in trace mode and, as a user runs
    # them, in summary mode.
    jobs.append(("torchrun", gpu_counts[-1], "ddp", "resnet50", False, False, "trace"))
    jobs.append(("torchrun", gpu_counts[-1], "ddp", "resnet50", False, False, "summary"))
    def job_name(launcher, gpus, wrap, model, pcontrol, kernels, mode):
        return (f"{launcher} {gpus} GPUs {wrap} {model}{' pcontrol' if pcontrol else ''}"
                f"{'' if kernels else ' no kernels'}{' summary' if mode == 'summary' else ''}")
    jobs = [job for job in jobs if args.only is None or args.only in job_name(*job)]
    failures = 0
    for launcher, gpus, wrap, model, pcontrol, kernels, mode in jobs:
        name = job_name(launcher, gpus, wrap, model, pcontrol, kernels, mode)
        checks = Checks(name)
        output = (os.path.join(args.keep, name.replace(" ", "-")) if args.keep
                  else tempfile.mkdtemp(prefix="commlens-dl-"))
        facts = run_job(args.cli, args.python, launcher, gpus, wrap, model, pcontrol, kernels, mode, output)
        if facts is None:
            checks.expect(False, "the job ran")
        else:
            check_job(args.cli, output, facts, launcher, pcontrol, wrap, gpus, kernels, mode, checks)
        failures += checks.failures
    print(f"dl_jobs_check: {len(jobs)} jobs, {failures} failed checks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
