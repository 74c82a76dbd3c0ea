/* message_queues: fills MPI's receive queues on purpose, for the MPI_T collector's tests.
 *
 * Usage: message_queues [single|multiple] [messages]   (default: single 64)
 * Ranks pair up (0-1, 2-3, ...); the even rank sends, the odd rank receives, tag = message number.
 * Phase 1, unexpected queue: the sender sends `messages` small eager messages, then both ranks call
 *   MPI_Barrier; the receiver sleeps 300 ms (the messages wait in its unexpected queue), then
 *   receives them.
 * Phase 2, posted queue: the receiver posts `messages` MPI_Irecv, both call MPI_Barrier, the
 *   receiver sleeps 300 ms (its receives wait in the posted queue), a second barrier lets the sender
 *   send, and MPI_Waitall completes them.
 * "multiple" initialises MPI with MPI_THREAD_MULTIPLE, "single" uses MPI_Init: the MPI_T collector
 * samples at call boundaries under both (its tests check both).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_ms(long ms) {
  struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

int main(int argc, char** argv) {
  const int multiple = argc > 1 && strcmp(argv[1], "multiple") == 0;
  const int messages = argc > 2 ? atoi(argv[2]) : 64;
  if (multiple) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int sender = rank % 2 == 0, peer = sender ? rank + 1 : rank - 1;
  const int paired = peer < size;
  int* values = calloc((size_t)messages, sizeof *values);
  MPI_Request* requests = malloc((size_t)messages * sizeof *requests);

  /* Phase 1: sends before the matching receives are posted. */
  for (int i = 0; paired && sender && i < messages; ++i) {
    MPI_Send(&i, 1, MPI_INT, peer, i, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (paired && !sender) {
    sleep_ms(300);
    for (int i = 0; i < messages; ++i) {
      MPI_Recv(&values[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }

  /* Phase 2: receives posted before the matching sends. */
  for (int i = 0; paired && !sender && i < messages; ++i) {
    MPI_Irecv(&values[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &requests[i]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (paired && !sender) {
    sleep_ms(300);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; paired && sender && i < messages; ++i) {
    MPI_Send(&i, 1, MPI_INT, peer, i, MPI_COMM_WORLD);
  }
  if (paired && !sender) {
    MPI_Waitall(messages, requests, MPI_STATUSES_IGNORE);
  }

  free(requests);
  free(values);
  MPI_Finalize();
  return 0;
}
