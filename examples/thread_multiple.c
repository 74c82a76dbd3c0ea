/* thread_multiple: 4 threads per rank calling MPI at once under MPI_THREAD_MULTIPLE.
 *
 * Usage: thread_multiple ITERATIONS     (world size P must be even)
 *
 * Setup (main thread): MPI_Init_thread(MPI_THREAD_MULTIPLE); 4 x MPI_Comm_dup(MPI_COMM_WORLD),
 * one communicator per thread. Each of the 4 threads t then does, ITERATIONS times, on its own
 * communicator (K = 48 MPI_INT, 192 B; pair = r^1):
 *   MPI_Sendrecv K ints to pair and K ints from pair (tag t): 192 / 192;
 *   MPI_Allreduce(K): 192 / 192.
 * Main thread after joining: 4 x MPI_Comm_free. Per rank: 4*ITERATIONS of each call, ITERATIONS
 * on each duplicated communicator, 2*ITERATIONS calls from each worker thread.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { THREADS = 4, K = 48 };

typedef struct {
  MPI_Comm comm;
  int tag, pair, iterations;
  long checksum;
} Worker;

static void* work(void* argument) {
  Worker* w = argument;
  int out[K], in[K], sum[K];
  for (int i = 0; i < K; ++i)
    out[i] = w->tag;
  for (int it = 0; it < w->iterations; ++it) {
    MPI_Sendrecv(out, K, MPI_INT, w->pair, w->tag, in, K, MPI_INT, w->pair, w->tag, w->comm,
                 MPI_STATUS_IGNORE);
    MPI_Allreduce(in, sum, K, MPI_INT, MPI_SUM, w->comm);
    w->checksum += sum[0];
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      fprintf(stderr, "thread_multiple: MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int iterations = argc > 1 ? atoi(argv[1]) : 10;
  Worker workers[THREADS];
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    MPI_Comm_dup(MPI_COMM_WORLD, &workers[t].comm);
    workers[t].tag = t;
    workers[t].pair = rank ^ 1;
    workers[t].iterations = iterations;
    workers[t].checksum = 0;
  }
  for (int t = 0; t < THREADS; ++t)
    pthread_create(&threads[t], NULL, work, &workers[t]);
  long checksum = 0;
  for (int t = 0; t < THREADS; ++t) {
    pthread_join(threads[t], NULL);
    checksum += workers[t].checksum;
    MPI_Comm_free(&workers[t].comm);
  }
  if (rank == 0)
    printf("thread_multiple: %d iterations x %d threads, checksum %ld\n", iterations, THREADS, checksum);
  MPI_Finalize();
  return 0;
}
