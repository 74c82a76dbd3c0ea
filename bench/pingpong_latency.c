/* Point-to-point latency between ranks 0 and 1: half the round-trip time of 8-byte messages.
 *   pingpong_latency [iterations=200000] [single|multiple]
 * "multiple" initialises MPI with MPI_THREAD_MULTIPLE (the MPI library then takes its locks; the
 * MPI_T collector samples at call exits either way). Prints "latency_ns <value>" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? atol(argv[1]) : 200000;
  if (argc > 2 && strcmp(argv[2], "multiple") == 0) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double message = 0.0;
  const int peer = rank == 0 ? 1 : 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (long i = 0; i < iterations && rank < 2; ++i) {
    if (rank == 0) {
      MPI_Send(&message, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(&message, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&message, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&message, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
    }
  }
  const double elapsed = MPI_Wtime() - start;
  if (rank == 0) {
    printf("latency_ns %.1f\n", elapsed * 1e9 / (2.0 * (double)iterations));
  }
  MPI_Finalize();
  return 0;
}
