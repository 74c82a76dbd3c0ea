/* fault_sigkill: known communication, then the last rank dies by SIGKILL.
 *
 * Usage: fault_sigkill ITERATIONS
 *
 * Every rank: ITERATIONS x (MPI_Allreduce of 32 MPI_INT, 128 B both ways; MPI_Barrier) on
 * MPI_COMM_WORLD, then sleeps 2 s. Then rank P-1 raises SIGKILL; the other ranks sleep (no MPI
 * call) until mpirun tears the job down. The job never reaches MPI_Finalize.
 */
#include <signal.h>

#include "fault_common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  fault_prelude(argc > 1 ? atoi(argv[1]) : 10);
  if (rank == size - 1)
    raise(SIGKILL);
  fault_wait_to_be_killed();
  return 0;
}
