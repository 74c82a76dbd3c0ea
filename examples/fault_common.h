/* Shared by fault_sigkill and fault_abort: the communication both do before their fault. */
#ifndef COMMLENS_EXAMPLES_FAULT_COMMON_H
#define COMMLENS_EXAMPLES_FAULT_COMMON_H

#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

enum { FAULT_INTS = 32, FAULT_SLEEP_SECONDS = 2 };

/* ITERATIONS x (MPI_Allreduce of 32 MPI_INT (128 B / 128 B) + MPI_Barrier) on MPI_COMM_WORLD, then
 * 2 s of sleep so that the profiler's periodic flush (at most 1 s) has stored all of it. */
static inline void fault_prelude(int iterations) {
  int out[FAULT_INTS], in[FAULT_INTS];
  for (int i = 0; i < FAULT_INTS; ++i)
    out[i] = i;
  for (int it = 0; it < iterations; ++it) {
    MPI_Allreduce(out, in, FAULT_INTS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  sleep(FAULT_SLEEP_SECONDS);
}

/* The ranks that do not fault wait without calling MPI until mpirun ends them. */
static inline void fault_wait_to_be_killed(void) {
  for (int i = 0; i < 60; ++i)
    sleep(1);
  exit(0);
}

#endif
