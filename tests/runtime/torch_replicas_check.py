"""Data-parallel training with CUDA tensors handed straight to MPI through mpi4py: comm.Bcast of
every parameter and optimizer buffer from rank 0, comm.Allreduce of every gradient (per tensor, then
fused into one flat buffer on alternate steps, in place), as a Horovod-style trainer does. The MPI
library need not be CUDA-aware: under COMMLENS_RUNTIME=on or ab the runtime runs the allreduces and
stages the broadcasts through host memory. Every rank starts from different random weights, so only
a correct broadcast makes the replicas equal; at the end every rank's parameter bytes must equal
rank 0's exactly, and rank 0 replays the whole training alone (every rank's batch, gradients averaged
on the host) to check the replicas hold the right weights, within float reordering.

usage: torch_replicas_check.py [STEPS]. Prints "torch_replicas_check: ok (...)" or "...: FAILED".
"""
import hashlib
import sys

try:
    import torch
    from mpi4py import MPI
except ImportError as missing:
    print(f"torch_replicas_check: skipped ({missing} in {sys.executable})")
    sys.exit(0)


def model_on(device):
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(4),
        torch.nn.Flatten(), torch.nn.Linear(32 * 16, 10)).to(device)


def broadcast_state(comm, model, optimizer):
    for parameter in model.parameters():
        comm.Bcast(parameter.data, root=0)
    for state in optimizer.state.values():
        for value in state.values():
            if torch.is_tensor(value) and value.is_cuda:
                comm.Bcast(value, root=0)


def average_gradients(comm, model, fused):
    gradients = [p.grad for p in model.parameters()]
    if fused:
        flat = torch.cat([g.reshape(-1) for g in gradients])
        comm.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM)
        offset = 0
        for g in gradients:
            g.copy_(flat[offset:offset + g.numel()].view_as(g))
            offset += g.numel()
    else:
        for g in gradients:
            comm.Allreduce(MPI.IN_PLACE, g, op=MPI.SUM)
    for g in gradients:
        g.div_(comm.size)


def replay(comm, initial, steps, device):
    """The same training in this process alone: each rank's gradients, averaged here."""
    model = model_on(device)
    model.load_state_dict(initial)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    data = torch.Generator(device=device)
    for step in range(steps):
        total = [torch.zeros_like(p) for p in model.parameters()]
        for rank in range(comm.size):
            data.manual_seed(step * 131 + rank)
            images = torch.randn(16, 3, 32, 32, device=device, generator=data)
            labels = torch.randint(0, 10, (16,), device=device, generator=data)
            model.zero_grad()
            torch.nn.functional.cross_entropy(model(images), labels).backward()
            for t, p in zip(total, model.parameters()):
                t += p.grad
        for t, p in zip(total, model.parameters()):
            p.grad = t / comm.size
        optimizer.step()
    return model


def digest(model):
    h = hashlib.sha256()
    for parameter in model.parameters():
        h.update(parameter.detach().cpu().numpy().tobytes())
    return h.hexdigest()


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    comm = MPI.COMM_WORLD
    if not torch.cuda.is_available():
        if comm.rank == 0:
            print("torch_replicas_check: skipped (no CUDA device)")
        return 0
    device = torch.device("cuda", comm.rank % torch.cuda.device_count())
    torch.manual_seed(1000 + comm.rank)  # different on every rank until the broadcast
    model = model_on(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    broadcast_state(comm, model, optimizer)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    data = torch.Generator(device=device)
    for step in range(steps):
        data.manual_seed(step * 131 + comm.rank)  # each rank its own batch
        images = torch.randn(16, 3, 32, 32, device=device, generator=data)
        labels = torch.randint(0, 10, (16,), device=device, generator=data)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        average_gradients(comm, model, fused=step % 2 == 1)
        optimizer.step()
        if step == 0:
            broadcast_state(comm, model, optimizer)  # the momentum buffers exist now
    digests = comm.allgather(digest(model))
    same = all(d == digests[0] for d in digests)
    if comm.rank == 0:
        expected = replay(comm, initial, steps, device)
        worst = max((p - q).abs().max().item() for p, q in zip(model.parameters(), expected.parameters()))
        right = worst < 1e-3
        print(f"torch_replicas_check: {'ok' if same and right else 'FAILED'} ({comm.size} ranks, {steps} steps, "
              f"replicas {'identical' if same else 'DIFFER'}, largest difference from the replay {worst:.2e}, "
              f"final loss {loss.item():.4f})", flush=True)
        same = same and right
    return 0 if comm.bcast(same, root=0) else 1


if __name__ == "__main__":
    sys.exit(main())
