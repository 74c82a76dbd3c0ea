/* Time per call of cheap MPI calls, so that a profiler's added cost per intercepted call shows:
 * MPI_Send to MPI_PROC_NULL (point-to-point path) and MPI_Test on MPI_REQUEST_NULL (completion path).
 * Run it once without and once with the profiler preloaded; bench/overhead.sh does that.
 *   call_overhead [iterations=2000000] [multiple]
 * `multiple` initialises MPI_THREAD_MULTIPLE, where the profiler keeps its count of threads inside
 * MPI with a locked instruction (one thread still makes every call here).
 * Prints: "<function> <ns per call>" lines. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double time_sends(long iterations) {
  char byte = 0;
  double start = MPI_Wtime();
  for (long i = 0; i < iterations; ++i) {
    MPI_Send(&byte, 1, MPI_CHAR, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
  }
  return (MPI_Wtime() - start) * 1e9 / (double)iterations;
}

static double time_tests(long iterations) {
  MPI_Request request = MPI_REQUEST_NULL;
  int flag = 0;
  double start = MPI_Wtime();
  for (long i = 0; i < iterations; ++i) {
    MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
  }
  return (MPI_Wtime() - start) * 1e9 / (double)iterations;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv,
                  argc > 2 && strcmp(argv[2], "multiple") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                  &provided);
  long iterations = argc > 1 ? atol(argv[1]) : 2000000;
  time_sends(iterations / 10); /* warm-up */
  double send_ns = time_sends(iterations);
  double test_ns = time_tests(iterations);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    printf("MPI_Send(PROC_NULL) %.2f\nMPI_Test(REQUEST_NULL) %.2f\n", send_ns, test_ns);
  }
  MPI_Finalize();
  return 0;
}
