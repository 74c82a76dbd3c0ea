"""Gradient averaging by allreduce over fusion buckets, blocking after backward or overlapped
with it (as Horovod's background thread and PyTorch DDP do).

Buckets follow the order backward produces gradients: the reverse of the model's parameter order.
Each gradient is divided by the number of ranks as it is packed, so the sum is the average.
Blocking: after backward, each bucket is packed, MPI_Allreduce'd in place and unpacked. Overlap:
a hook on each parameter's gradient accumulator counts the bucket's ready gradients; a complete
bucket is packed and its MPI_Iallreduce posted at once, buckets strictly in order (collectives
must be posted in the same order on every rank); `synchronize` waits for all of them (one
MPI_Waitall) before the optimizer step. Open MPI progresses a nonblocking collective only inside
MPI calls, so on its own it makes progress mostly in that wait."""
import torch
from mpi4py import MPI

import mpi_types
from fusion import FusionBucket, plan_buckets


class GradientExchange:
    def __init__(self, comm, model, threshold, fp16, gradients, overlap):
        self.comm = comm
        self.world_size = comm.Get_size()
        self.gradients = gradients
        parameters = [p for p in model.parameters() if p.requires_grad]
        ready_order = list(reversed(parameters))
        wire_dtype = torch.float16 if fp16 else torch.float32
        element_size = torch.tensor([], dtype=wire_dtype).element_size()
        plan = plan_buckets([p.numel() * element_size for p in ready_order], threshold)
        device = parameters[0].device
        self.buckets = [FusionBucket([ready_order[i] for i in indexes], wire_dtype, device,
                                     staged=gradients == "host-staged") for indexes in plan]
        self.datatype = mpi_types.datatype_of(wire_dtype)
        self.op = mpi_types.sum_op_of(wire_dtype)
        self.overlap = overlap
        self._requests = []
        if overlap:
            self._install_hooks()

    def _allreduce_message(self, bucket):
        if self.gradients == "cuda":
            torch.cuda.current_stream().synchronize()  # MPI reads the buffer outside CUDA streams
        return [bucket.mpi_buffer(), self.datatype]

    def allreduce_blocking(self):
        for bucket in self.buckets:
            bucket.pack(self.world_size)
            self.comm.Allreduce(MPI.IN_PLACE, self._allreduce_message(bucket), op=self.op)
            bucket.unpack()

    # Overlap mode: counters per bucket, reset every step.
    def _install_hooks(self):
        self._bucket_of = {}
        self._accumulators = []  # the hooks live as long as their accumulator objects
        for number, bucket in enumerate(self.buckets):
            for parameter in bucket.parameters:
                self._bucket_of[id(parameter)] = number
                accumulator = parameter.expand_as(parameter).grad_fn.next_functions[0][0]
                accumulator.register_hook(lambda *unused, p=parameter: self._gradient_ready(p))
                self._accumulators.append(accumulator)
        self._reset_counters()

    def _reset_counters(self):
        self._missing = [len(bucket.parameters) for bucket in self.buckets]
        self._next_to_post = 0

    def _gradient_ready(self, parameter):
        self._missing[self._bucket_of[id(parameter)]] -= 1
        while self._next_to_post < len(self.buckets) and self._missing[self._next_to_post] == 0:
            self._post(self.buckets[self._next_to_post])
            self._next_to_post += 1

    def _post(self, bucket):
        bucket.pack(self.world_size)
        self._requests.append(
            self.comm.Iallreduce(MPI.IN_PLACE, self._allreduce_message(bucket), op=self.op))

    def synchronize(self):
        """Averages this step's gradients: every bucket reduced and written back."""
        if not self.overlap:
            self.allreduce_blocking()
            return
        while self._next_to_post < len(self.buckets):  # parameters backward never reached
            self._post(self.buckets[self._next_to_post])
            self._next_to_post += 1
        MPI.Request.Waitall(self._requests)
        self._requests = []
        for bucket in self.buckets:
            bucket.unpack()
        self._reset_counters()
