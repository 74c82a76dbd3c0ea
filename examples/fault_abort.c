/* fault_abort: known communication, then rank 1 ends the job with MPI_Abort(MPI_COMM_WORLD, 3).
 *
 * Usage: fault_abort ITERATIONS     (needs at least 2 ranks)
 *
 * Every rank: ITERATIONS x (MPI_Allreduce of 32 MPI_INT, 128 B both ways; MPI_Barrier) on
 * MPI_COMM_WORLD, then sleeps 2 s. Then rank 1 calls MPI_Abort; the other ranks sleep (no MPI
 * call) until the job is torn down. The job never reaches MPI_Finalize.
 */
#include "fault_common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fault_prelude(argc > 1 ? atoi(argv[1]) : 10);
  if (rank == 1)
    MPI_Abort(MPI_COMM_WORLD, 3);
  fault_wait_to_be_killed();
  return 0;
}
