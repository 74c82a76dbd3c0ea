/* How long MPI_Finalize keeps rank 0 waiting, as the program sees it (with a preloaded profiler:
 * the clock exchange, the ranks' page encoding and the merge included), after ITERATIONS steps of
 * a ring exchange (MPI_Isend and MPI_Irecv of 1 KiB to each neighbour, MPI_Waitall) and an
 * MPI_Allreduce every eighth step; bench/merge_scale.sh runs it.
 *   finalize_time [ITERATIONS=200]
 * Prints on rank 0, after MPI_Finalize: "mpi_finalize_ms <rank 0's>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { COUNT = 256 };

static double now_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? atoi(argv[1]) : 200;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int neighbours[2] = {(rank + 1) % size, (rank + size - 1) % size};
  static int out[2][COUNT], in[2][COUNT];
  for (int step = 0; step < iterations; ++step) {
    MPI_Request requests[4];
    for (int side = 0; side < 2; ++side) {
      MPI_Irecv(in[side], COUNT, MPI_INT, neighbours[side], 0, MPI_COMM_WORLD, &requests[2 * side]);
      MPI_Isend(out[side], COUNT, MPI_INT, neighbours[1 - side], 0, MPI_COMM_WORLD, &requests[2 * side + 1]);
    }
    MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
    if (step % 8 == 7) {
      double value = step, sum = 0;
      MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  const double before = now_ms();
  MPI_Finalize();
  if (rank == 0) {
    printf("mpi_finalize_ms %.1f\n", now_ms() - before);
  }
  return 0;
}
