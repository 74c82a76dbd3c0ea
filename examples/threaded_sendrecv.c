/* threaded_sendrecv: four threads per rank exchanging with the paired rank at once, so that the
 * rank's calls overlap in time: its time in MPI (wall time with at least one thread inside MPI) is
 * far below the sum of its threads' times.
 *
 * Usage: threaded_sendrecv ITERATIONS [PAUSE_MS=0]     (world size P must be even)
 *
 * Main thread: MPI_Init_thread(MPI_THREAD_MULTIPLE), MPI_Comm_rank, MPI_Comm_size, then starts 4
 * threads and joins them, then MPI_Finalize. Each thread t does, ITERATIONS times, one MPI_Sendrecv on
 * MPI_COMM_WORLD with pair = r^1: K = 8 MPI_INT (32 B) sent and received, tag t. On odd ranks each
 * thread first sleeps PAUSE_MS, so the even rank's four threads wait inside MPI_Sendrecv at the same
 * time, each for about PAUSE_MS per iteration. Per rank: 4*ITERATIONS MPI_Sendrecv, ITERATIONS
 * from each of the 4 threads.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { THREADS = 4, K = 8 };

typedef struct {
  int tag, pair, rank, iterations, pause_ms, wrong;
} Worker;

static void* exchange(void* argument) {
  Worker* w = argument;
  int out[K], in[K];
  const struct timespec pause = {w->pause_ms / 1000, (long)(w->pause_ms % 1000) * 1000000L};
  for (int i = 0; i < w->iterations; ++i) {
    if (w->rank % 2 == 1 && w->pause_ms > 0)
      nanosleep(&pause, NULL);
    for (int k = 0; k < K; ++k)
      out[k] = w->rank * 1000 + w->tag * 100 + k;
    MPI_Sendrecv(out, K, MPI_INT, w->pair, w->tag, in, K, MPI_INT, w->pair, w->tag, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int k = 0; k < K; ++k)
      w->wrong |= in[k] != w->pair * 1000 + w->tag * 100 + k;
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "threaded_sendrecv: MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 2000;
  const int pause_ms = argc > 2 ? atoi(argv[2]) : 0;
  if (size % 2 != 0 || iterations < 0 || pause_ms < 0) {
    if (rank == 0)
      fprintf(stderr,
              "threaded_sendrecv: needs an even number of ranks, ITERATIONS >= 0 and PAUSE_MS >= 0\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  pthread_t threads[THREADS];
  Worker workers[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    workers[t] = (Worker){t, rank ^ 1, rank, iterations, pause_ms, 0};
    pthread_create(&threads[t], NULL, exchange, &workers[t]);
  }
  int wrong = 0;
  for (int t = 0; t < THREADS; ++t) {
    pthread_join(threads[t], NULL);
    wrong |= workers[t].wrong;
  }
  if (wrong)
    fprintf(stderr, "threaded_sendrecv: rank %d received wrong data\n", rank);
  MPI_Finalize();
  return wrong;
}
