#!/usr/bin/python3
"""Data-parallel training with PyTorch and mpi4py, communicating as Horovod does; the subject of
docs/dl-guide.md.

Usage: mpirun -np P /usr/bin/python3 examples/dl/train.py [--model small|resnet18|resnet50|vgg16]
         [--batch-size 32] [--steps 10] [--warmup-steps 2] [--image-size N]
         [--fusion-threshold 64MiB] [--fp16] [--overlap] [--gradients host|host-staged|cuda]

Communication on MPI_COMM_WORLD, per rank:
  set-up (phase 0): one MPI_Bcast from rank 0 per state_dict tensor (parameters and buffers), one
    per parameter (its momentum buffer), one of 4 doubles per parameter group (hyper-parameters);
  each step (one phase, opened by MPI_Pcontrol(2)): the gradients, in reverse parameter order,
    packed into fusion buckets of at most --fusion-threshold bytes (0: one per tensor; a larger
    tensor alone), 4 bytes an element (2 with --fp16, then a 2-byte type with a user-defined sum);
    one MPI_Allreduce per bucket, or with --overlap one MPI_Iallreduce per bucket and one
    MPI_Waitall;
  tear-down (after a last MPI_Pcontrol(2)): MPI_Gather of each rank's images/s to rank 0 and
    MPI_Allgather of each rank's parameter digest, which must all be equal (exit status 1 if not).
Gradients: `host` trains on the CPU; `host-staged` trains on a GPU and copies each bucket to pinned
host memory for MPI; `cuda` hands the CUDA tensors of the blocking MPI_Allreduce to MPI (a
CUDA-aware MPI, or COMMLENS_RUNTIME=on with commlens' GPU runtime; not with --overlap). Set-up
broadcasts go through host memory in every mode."""
import argparse
import os
import re
import sys

import numpy
import torch
from mpi4py import MPI

import models
import mpi_types
from trainer import Trainer

_UNITS = {"": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2, "mib": 1024**2,
          "g": 1000**3, "gb": 1000**3, "gib": 1024**3}


def byte_count(text):
    match = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise argparse.ArgumentTypeError(f"{text!r}: expected bytes, e.g. 0, 65536, 64MiB")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="Horovod-style data-parallel training over mpi4py")
    parser.add_argument("--model", choices=models.MODEL_NAMES, default="resnet18")
    parser.add_argument("--batch-size", type=int, default=32, help="images per rank and step")
    parser.add_argument("--steps", type=int, default=10, help="timed steps")
    parser.add_argument("--warmup-steps", type=int, default=2, help="steps before timing starts")
    parser.add_argument("--image-size", type=int, help="pixels per side (default 32 small, else 224)")
    parser.add_argument("--fusion-threshold", type=byte_count, default=64 * 1024**2,
                        help="bytes per fused allreduce, 0 = one per tensor (default 64MiB)")
    parser.add_argument("--fp16", action="store_true", help="compress gradients to fp16 for MPI")
    parser.add_argument("--overlap", action="store_true",
                        help="post nonblocking allreduces from backward, wait before the optimizer")
    parser.add_argument("--gradients", choices=("host", "host-staged", "cuda"), default="host")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads per rank")
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=1234)
    options = parser.parse_args(argv)
    if options.image_size is None:
        options.image_size = models.default_image_size(options.model)
    if options.gradients == "cuda" and options.overlap:
        parser.error("--overlap posts MPI_Iallreduce, which commlens' GPU runtime does not take: with "
                     "--gradients cuda use the blocking allreduce (or --gradients host-staged)")
    if options.steps < 1 or options.warmup_steps < 0 or options.batch_size < 1:
        parser.error("--steps must be at least 1, --warmup-steps at least 0, --batch-size at least 1")
    return options


def pick_device(gradients):
    if gradients == "host":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise SystemExit(f"train.py: --gradients {gradients} needs a CUDA GPU; torch sees none")
    local_rank = 0
    for variable in ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"):
        if variable in os.environ:
            local_rank = int(os.environ[variable])
            break
    return torch.device("cuda", local_rank % torch.cuda.device_count())


def report(comm, options, rate, digest, trainer):
    rank, size = comm.Get_rank(), comm.Get_size()
    rates = numpy.zeros(size) if rank == 0 else None
    comm.Gather([numpy.array([rate]), MPI.DOUBLE], [rates, MPI.DOUBLE] if rank == 0 else None, root=0)
    digests = numpy.zeros(size, dtype=numpy.uint64)
    comm.Allgather([numpy.array([digest], dtype=numpy.uint64), MPI.UINT64_T], [digests, MPI.UINT64_T])
    identical = bool((digests == digests[0]).all())
    if rank == 0:
        buckets = trainer.exchange.buckets
        print(f"train: model {options.model}, {size} ranks, batch {options.batch_size}, image "
              f"{options.image_size}, {options.steps} steps after {options.warmup_steps} warm-up, "
              f"gradients {options.gradients}, fusion threshold {options.fusion_threshold} B, "
              f"fp16 {'on' if options.fp16 else 'off'}, overlap {'on' if options.overlap else 'off'}")
        print(f"train: {len(buckets)} allreduces per step of "
              f"{', '.join(str(bucket.bytes) for bucket in buckets)} bytes")
        for number, value in enumerate(rates):
            print(f"rank {number}: {value:.1f} images/s")
        print(f"total: {rates.sum():.1f} images/s")
        print(f"replicas identical: {'yes' if identical else 'NO'} (parameter digest {digests[0]:016x}"
              + ("" if identical else f"; per rank {', '.join(f'{d:016x}' for d in digests)}") + ")")
    return identical


def main(argv):
    options = parse_arguments(argv)
    torch.set_num_threads(options.threads)
    comm = MPI.COMM_WORLD
    torch.manual_seed(options.seed + comm.Get_rank())  # different on each rank until the broadcast
    model, classes = models.build_model(options.model)
    trainer = Trainer(comm, model, classes, options, pick_device(options.gradients))
    trainer.broadcast_initial_state()
    rate = trainer.train()
    identical = report(comm, options, rate, trainer.parameter_digest(), trainer)
    mpi_types.free_types()
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
