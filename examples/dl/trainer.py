"""A Horovod-style data-parallel trainer: rank 0's initial parameters, buffers and optimizer state
are broadcast to every rank, then each step computes gradients on this rank's synthetic batch and
averages them across ranks by allreduce (gradients.py) before the optimizer step.

Each step is a profiling phase: MPI_Pcontrol(2) opens it, and one more MPI_Pcontrol(2) after the
last step closes the last one, so commlens reports phase 0 as set-up, phases 1..N as the N steps
and the final phase as the tear-down. With CUDA, NVTX ranges mark `step` and, inside it,
`forward`, `backward`, `allreduce` and `optimizer`."""
import contextlib
import hashlib
import time

import numpy
import torch
from mpi4py import MPI

import mpi_types
from gradients import GradientExchange


@contextlib.contextmanager
def nvtx_range(name, enabled):
    if enabled:
        torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        if enabled:
            torch.cuda.nvtx.range_pop()


class Trainer:
    def __init__(self, comm, model, classes, options, device):
        self.comm = comm
        self.options = options
        self.device = device
        self.on_gpu = device.type == "cuda"
        self.model = model.to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=options.learning_rate, momentum=0.9)
        # Momentum buffers exist from the start, so the optimizer state can be broadcast before step 1.
        for parameter in self.model.parameters():
            self.optimizer.state[parameter]["momentum_buffer"] = torch.zeros_like(parameter)
        self.criterion = torch.nn.CrossEntropyLoss()
        generator = torch.Generator().manual_seed(options.seed + comm.Get_rank())  # own data per rank
        shape = (options.batch_size, 3, options.image_size, options.image_size)
        self.images = torch.randn(shape, generator=generator).to(device)
        self.labels = torch.randint(0, classes, (options.batch_size,), generator=generator).to(device)
        self.exchange = None

    # -- set-up: one MPI_Bcast per tensor, as Horovod's broadcast_parameters and
    # broadcast_optimizer_state do.
    def _broadcast_tensor(self, tensor):
        # Through host memory in every mode: set-up is not timed, and commlens' GPU runtime takes
        # MPI_Allreduce only, so a device buffer would reach an MPI that may not be CUDA-aware.
        host = tensor.detach().reshape(-1).cpu() if self.on_gpu else tensor.detach().reshape(-1)
        self.comm.Bcast([host.numpy(), mpi_types.datatype_of(tensor.dtype)], root=0)
        if self.on_gpu:
            tensor.copy_(host.view_as(tensor))

    def broadcast_initial_state(self):
        """state_dict tensors (parameters and buffers), then each parameter's momentum buffer, then
        one float64 array of each parameter group's hyper-parameters."""
        with torch.no_grad():
            for tensor in self.model.state_dict().values():
                self._broadcast_tensor(tensor)
            for parameter in self.model.parameters():
                self._broadcast_tensor(self.optimizer.state[parameter]["momentum_buffer"])
        for group in self.optimizer.param_groups:
            keys = ("lr", "momentum", "dampening", "weight_decay")
            values = numpy.array([float(group[key]) for key in keys], dtype=numpy.float64)
            self.comm.Bcast([values, MPI.DOUBLE], root=0)
            group.update(zip(keys, values.tolist()))
        self.exchange = GradientExchange(self.comm, self.model, self.options.fusion_threshold,
                                         self.options.fp16, self.options.gradients, self.options.overlap)

    def step(self):
        MPI.Pcontrol(2)
        gpu = self.on_gpu
        with nvtx_range("step", gpu):
            self.optimizer.zero_grad()
            with nvtx_range("forward", gpu):
                loss = self.criterion(self.model(self.images), self.labels)
            with nvtx_range("backward", gpu):
                loss.backward()  # overlap mode: buckets are posted from here
            with nvtx_range("allreduce", gpu):
                self.exchange.synchronize()
            with nvtx_range("optimizer", gpu):
                self.optimizer.step()
            if gpu:
                torch.cuda.synchronize()  # the step's time includes its GPU work
        return loss.item()

    def train(self):
        """Runs the warm-up and timed steps; returns this rank's images per second."""
        for _ in range(self.options.warmup_steps):
            self.step()
        start = time.perf_counter()
        for _ in range(self.options.steps):
            self.step()
        elapsed = time.perf_counter() - start
        MPI.Pcontrol(2)  # ends the last step's phase
        return self.options.batch_size * self.options.steps / elapsed if elapsed > 0 else 0.0

    def parameter_digest(self):
        """First 8 bytes of the SHA-256 of every parameter's bytes, as an unsigned integer."""
        digest = hashlib.sha256()
        for parameter in self.model.parameters():
            digest.update(parameter.detach().cpu().contiguous().numpy().tobytes())
        return int.from_bytes(digest.digest()[:8], "little")
