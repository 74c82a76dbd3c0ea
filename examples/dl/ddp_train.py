#!/usr/bin/env python3
"""PyTorch data-parallel training over NCCL as deep-learning teams run it: one GPU per rank,
DistributedDataParallel (DDP) or FullyShardedDataParallel (FSDP), synthetic data made on the GPU.
Started by torchrun or by mpirun:

    torchrun --nproc_per_node 4 examples/dl/ddp_train.py --model resnet50 --steps 40
    mpirun -np 4 python3 examples/dl/ddp_train.py --model transformer --wrap fsdp

Under mpirun the ranks come from Open MPI's environment and mpi4py is imported (MPI_Init runs, as
in jobs that use MPI beside NCCL); under torchrun MPI is never touched. Each step is an NVTX range
`step` with `forward`, `backward` and `optimizer` inside; --pcontrol also makes each step an
MPI_Pcontrol(2) phase (mpirun only). The step time is taken with the GPU synchronised at both ends.

Rank 0 prints each step's time and one line `DDP_TRAIN {json}` with what the communication follows
from: the step times (ms) and the median host time to queue a step (ms), DDP's gradient buckets (bytes, as its reducer built them) or FSDP's
units (the bytes of each flat parameter, whole), the bytes of the model's parameters and buffers
(what DDP broadcasts from rank 0 at the start), and the NVTX step windows (CLOCK_MONOTONIC ns).
"""
import argparse
import json
import os
import socket
import statistics
import time

import torch
import torch.distributed as dist
from torch import nn

MODELS = ("resnet50", "transformer", "small")


def launched_by_mpirun():
    return "OMPI_COMM_WORLD_RANK" in os.environ


def gpu_local_cpus(device):
    """The CPUs a GPU's PCI device is attached near (sysfs), or None where the machine does not say."""
    properties = torch.cuda.get_device_properties(device)
    try:
        address = f"{properties.pci_domain_id:04x}:{properties.pci_bus_id:02x}:{properties.pci_device_id:02x}.0"
        with open(f"/sys/bus/pci/devices/{address}/local_cpulist") as listing:
            text = listing.read().strip()
    except (AttributeError, OSError, ValueError):
        return None
    cpus = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return frozenset(cpus)


def bind_cpus(local_rank, local_world):
    """Pins this rank to its own share of the CPUs near its GPU, shared out among the node's ranks
    whose GPUs are near the same CPUs (all CPUs and all ranks, where the machine does not say): a
    rank whose launches run on a far or busy core steps slower, which makes runs of one job differ
    by several percent."""
    allowed = frozenset(os.sched_getaffinity(0))
    devices = torch.cuda.device_count()
    near = [(gpu_local_cpus(device) or allowed) & allowed or allowed for device in range(devices)]
    own = local_rank % devices
    # The node's ranks in order, each on GPU rank % devices: those whose GPU is near the same CPUs.
    neighbours = [r for r in range(local_world) if near[r % devices] == near[own]]
    cpus = sorted(near[own])
    share = max(1, len(cpus) // len(neighbours))
    slot = neighbours.index(local_rank)
    mine = cpus[slot * share:(slot + 1) * share] or cpus
    os.sched_setaffinity(0, mine)
    return mine


def join_job(args):
    """Rank, world size and local rank; the process group joined."""
    mpi = None
    if launched_by_mpirun():
        from mpi4py import MPI  # MPI_Init: the profiler starts here under commlens
        mpi = MPI
        rank, world = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
        local_rank = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", rank))
        port = None
        if rank == 0:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(MPI.COMM_WORLD.bcast(port, root=0))
        os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(local_rank))
    else:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local_rank % torch.cuda.device_count())
    if args.bind_cpus:
        local_world = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE", os.environ.get("LOCAL_WORLD_SIZE", world)))
        cpus = bind_cpus(local_rank, local_world)
        print(f"rank {rank}: bound to CPUs {cpus[0]}-{cpus[-1]} ({len(cpus)})", flush=True)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    return rank, world, mpi


def build_model(name):
    """The model and a function making one batch of synthetic data on the GPU."""
    if name == "resnet50":
        import torchvision.models
        model = torchvision.models.resnet50(weights=None)
        return model, lambda batch: torch.randn(batch, 3, 224, 224, device="cuda")
    if name == "transformer":
        # 12 encoder layers of width 1024: 151 M parameters.
        layer = nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096, batch_first=True)
        model = nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False)
        return model, lambda batch: torch.randn(batch, 512, 1024, device="cuda")
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024))
    return model, lambda batch: torch.randn(batch, 1024, device="cuda")


def state_bytes(model):
    return sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers()))


def wrap(model, how, model_name):
    if how == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        return DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])
    from torch.distributed.fsdp import FullyShardedDataParallel
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    units = {nn.TransformerEncoderLayer} if model_name == "transformer" else {nn.Linear}
    if model_name == "resnet50":
        import torchvision.models.resnet
        units = {torchvision.models.resnet.Bottleneck}
    return FullyShardedDataParallel(model, auto_wrap_policy=ModuleWrapPolicy(units),
                                    device_id=torch.cuda.current_device())


def communication_facts(wrapped, how, world):
    """DDP: the buckets' bytes, first and rebuilt; FSDP: each unit's flat parameter, whole."""
    if how == "ddp":
        logging = wrapped._get_ddp_logging_data()

        def sizes(key):
            text = logging.get(key) if isinstance(logging, dict) else None
            return [int(part) for part in str(text).replace(",", " ").split()] if text else None
        return {"bucket_sizes": sizes("bucket_sizes"), "rebuilt_bucket_sizes": sizes("rebuilt_bucket_sizes")}
    from torch.distributed.fsdp import FullyShardedDataParallel
    units = []
    for module in FullyShardedDataParallel.fsdp_modules(wrapped):
        handle = getattr(module, "_handle", None)
        if handle is not None and handle.flat_param is not None:
            flat = handle.flat_param
            units.append({"bytes": flat.numel() * world * flat.element_size(), "root": module is wrapped})
    return {"fsdp_units": units}


class Nvtx:
    def __init__(self, enabled):
        self.enabled = enabled

    def push(self, name):
        if self.enabled:
            torch.cuda.nvtx.range_push(name)

    def pop(self):
        if self.enabled:
            torch.cuda.nvtx.range_pop()


def train(args):
    rank, world, mpi = join_job(args)
    torch.manual_seed(args.seed)
    model, batch_of = build_model(args.model)
    model = model.cuda()
    facts = {"state_bytes": state_bytes(model)}
    wrapped = wrap(model, args.wrap, args.model)
    optimizer = torch.optim.SGD(wrapped.parameters(), lr=1e-3, momentum=0.9)
    data = batch_of(args.batch_size)
    nvtx = Nvtx(not args.no_nvtx)
    profiler = None
    if args.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        profiler = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        profiler.__enter__()
    # issue_ms: the host time to queue a step's work, from the step's start to the synchronisation
    # that waits for the GPU: what a profiler's work on the launching threads adds to.
    step_ms, issue_ms, windows = [], [], []
    for _ in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        if args.pcontrol and mpi is not None:
            mpi.Pcontrol(2)
        began = time.monotonic_ns()
        nvtx.push("step")
        nvtx.push("forward")
        loss = wrapped(data).float().square().mean()
        nvtx.pop()
        nvtx.push("backward")
        loss.backward()
        nvtx.pop()
        nvtx.push("optimizer")
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        nvtx.pop()
        nvtx.pop()
        issued = time.monotonic_ns()
        torch.cuda.synchronize()
        ended = time.monotonic_ns()
        step_ms.append((ended - began) / 1e6)
        issue_ms.append((issued - began) / 1e6)
        windows.append([began, ended])
        if profiler is not None:
            profiler.step()
    if args.pcontrol and mpi is not None:
        mpi.Pcontrol(2)  # ends the last step's phase
    if profiler is not None:
        profiler.__exit__(None, None, None)
    facts.update(communication_facts(wrapped, args.wrap, world))
    timed, timed_issue = step_ms[args.warmup:], issue_ms[args.warmup:]
    if rank == 0:
        print(f"steps (ms): {' '.join(f'{ms:.2f}' for ms in step_ms)}")
        facts.update(model=args.model, wrap=args.wrap, world=world, batch_size=args.batch_size,
                     warmup=args.warmup, step_ms=step_ms, windows=windows,
                     median_ms=statistics.median(timed), mean_ms=statistics.fmean(timed),
                     median_issue_ms=statistics.median(timed_issue),
                     launcher="mpirun" if mpi is not None else "torchrun")
        print("DDP_TRAIN " + json.dumps(facts), flush=True)
    dist.barrier()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=MODELS, default="resnet50")
    parser.add_argument("--wrap", choices=("ddp", "fsdp"), default="ddp")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="per rank (default: 64 images for resnet50, 8 sequences for transformer)")
    parser.add_argument("--steps", type=int, default=40, help="timed steps")
    parser.add_argument("--warmup", type=int, default=5, help="steps before the timed ones")
    parser.add_argument("--pcontrol", action="store_true", help="each step an MPI_Pcontrol(2) phase (mpirun)")
    parser.add_argument("--no-nvtx", action="store_true", help="no NVTX ranges")
    parser.add_argument("--torch-profiler", action="store_true",
                        help="run torch.profiler (CPU and CUDA activities) over every step")
    parser.add_argument("--bind-cpus", action="store_true",
                        help="pin each rank to its share of the CPUs near its GPU (benchmarks)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.batch_size is None:
        args.batch_size = {"resnet50": 64, "transformer": 8, "small": 256}[args.model]
    train(args)


if __name__ == "__main__":
    main()
