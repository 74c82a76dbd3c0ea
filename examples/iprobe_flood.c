/* iprobe_flood: MPI_Iprobe in a tight loop, the pattern of a rank polling for messages, at a rate
 * no trace writer stores as fast as the calls come (tens of millions of calls a second).
 *
 * Usage: iprobe_flood CALLS
 *
 * Per rank: CALLS MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD) with no message ever sent
 * (each returns flag 0), then one MPI_Barrier. Prints "iprobe_flood: rank R: CALLS calls in S s".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long calls = argc > 1 ? atol(argv[1]) : 1000000;
  int found = 0;
  const double began = MPI_Wtime();
  for (long call = 0; call < calls; ++call) {
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    found += flag;
  }
  const double seconds = MPI_Wtime() - began;
  MPI_Barrier(MPI_COMM_WORLD);
  printf("iprobe_flood: rank %d: %ld calls in %.3f s%s\n", rank, calls, seconds,
         found != 0 ? " (a message was found)" : "");
  MPI_Finalize();
  return found != 0;
}
