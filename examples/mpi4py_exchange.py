#!/usr/bin/python3
"""mpi4py_exchange: buffer-based mpi4py point-to-point and collectives with known counts.

Usage: mpirun -np P /usr/bin/python3 mpi4py_exchange.py ITERATIONS     (P even; Debian's python3-mpi4py)

All on MPI_COMM_WORLD with K = 64 doubles (512 B), r = rank, pair = r ^ 1. Per iteration:
  even r: Comm.Send K doubles to pair (tag 5), then Comm.Recv K doubles from pair (tag 6);
  odd r:  Comm.Recv K doubles from pair (tag 5), then Comm.Send K doubles to pair (tag 6);
  Comm.Allreduce of K doubles (512 B both ways);
  Comm.Bcast of K doubles from root 0 (root sends 512 B, the others receive 512 B).
So per rank: ITERATIONS x (1 MPI_Send, 1 MPI_Recv, 1 MPI_Allreduce, 1 MPI_Bcast). The uppercase
buffer methods map one to one onto the C calls (the pickling lowercase ones do not).
"""
import sys
from array import array

from mpi4py import MPI

K = 64


def main():
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    pair = rank ^ 1
    out = array("d", [float(rank)] * K)
    into = array("d", [0.0] * K)
    total = array("d", [0.0] * K)
    checksum = 0.0
    for _ in range(iterations):
        if rank % 2 == 0:
            comm.Send([out, MPI.DOUBLE], dest=pair, tag=5)
            comm.Recv([into, MPI.DOUBLE], source=pair, tag=6)
        else:
            comm.Recv([into, MPI.DOUBLE], source=pair, tag=5)
            comm.Send([out, MPI.DOUBLE], dest=pair, tag=6)
        comm.Allreduce([into, MPI.DOUBLE], [total, MPI.DOUBLE], op=MPI.SUM)
        comm.Bcast([total, MPI.DOUBLE], root=0)
        checksum += total[0]
    if rank == 0:
        print(f"mpi4py_exchange: {iterations} iterations, checksum {checksum}")


if __name__ == "__main__":
    main()
