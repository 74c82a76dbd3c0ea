/* How long MPI_Init keeps the application waiting, as the application sees it (with a preloaded
 * profiler: its set-up included), so that a profiler's start-up cost shows against the same
 * program unprofiled; bench/init_overhead.sh runs it.
 *   init_time
 * Prints on rank 0: "mpi_init_ms <mean over ranks> <largest>". */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double now_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  const double before = now_ms();
  MPI_Init(&argc, &argv);
  const double spent = now_ms() - before;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double sum = 0.0, largest = 0.0;
  MPI_Reduce(&spent, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&spent, &largest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("mpi_init_ms %.1f %.1f\n", sum / size, largest);
  }
  MPI_Finalize();
  return 0;
}
