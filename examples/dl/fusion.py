"""Tensor fusion as Horovod does it (HOROVOD_FUSION_THRESHOLD): gradients, in the order backward
produces them, are packed greedily into buckets of at most `threshold` bytes, one allreduce per
bucket. A tensor larger than the threshold travels alone; threshold 0 means one allreduce per
tensor. With fp16 compression the threshold counts the compressed (2-byte) elements, the bytes
that travel."""
import torch


def plan_buckets(sizes_in_bytes, threshold):
    """Lists of indexes into `sizes_in_bytes`, in order, each list one bucket."""
    buckets, current, current_bytes = [], [], 0
    for index, size in enumerate(sizes_in_bytes):
        if current and (threshold == 0 or current_bytes + size > threshold):
            buckets.append(current)
            current, current_bytes = [], 0
        current.append(index)
        current_bytes += size
    if current:
        buckets.append(current)
    return buckets


class FusionBucket:
    """One bucket's parameters and its flat buffer on the gradients' device (fp32, or fp16 when
    compressing). `host` is the pinned host copy MPI sees in host-staged mode."""

    def __init__(self, parameters, wire_dtype, device, staged):
        self.parameters = parameters
        self.elements = sum(p.numel() for p in parameters)
        self.flat = torch.empty(self.elements, dtype=wire_dtype, device=device)
        self.host = torch.empty(self.elements, dtype=wire_dtype, pin_memory=True) if staged else None

    @property
    def bytes(self):
        return self.elements * self.flat.element_size()

    def pack(self, world_size):
        """Copies the gradients, divided by the number of ranks, into the flat buffer (cast to its
        type), then to the host copy. Dividing before the sum (Horovod's prescaling) keeps fp16 sums
        of large gradients from overflowing."""
        offset = 0
        for parameter in self.parameters:
            count = parameter.numel()
            if parameter.grad is None:  # a parameter this step's backward did not reach
                parameter.grad = torch.zeros_like(parameter)
            self.flat[offset:offset + count].copy_(parameter.grad.reshape(-1) / world_size)
            offset += count
        if self.host is not None:
            self.host.copy_(self.flat)

    def unpack(self):
        """Writes the sums of the divided gradients, their average, back."""
        if self.host is not None:
            self.flat.copy_(self.host)
        offset = 0
        for parameter in self.parameters:
            count = parameter.numel()
            parameter.grad.copy_(self.flat[offset:offset + count].view_as(parameter.grad))
            offset += count

    def mpi_buffer(self):
        """What MPI reads and writes: the host copy, the CPU tensor's memory, or the CUDA tensor
        itself (mpi4py takes its __cuda_array_interface__)."""
        if self.host is not None:
            return self.host.numpy()
        if self.flat.is_cuda:
            return self.flat
        return self.flat.numpy()
