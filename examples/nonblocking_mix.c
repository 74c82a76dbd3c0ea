/* nonblocking_mix: nonblocking and persistent point-to-point with every completion style.
 *
 * Usage: nonblocking_mix ITERATIONS     (world size P must be even)
 *
 * All on MPI_COMM_WORLD; K = 32 MPI_INT (128 B), M = 512 MPI_DOUBLE (4096 B);
 * right = (r+1)%P, left = (r-1+P)%P, pair = r^1.
 * Before the loop: MPI_Send_init(K ints to right, tag 30) and MPI_Recv_init(K ints from left, tag 30).
 * Per iteration:
 *   1. Waitall:  MPI_Irecv K from left (tag 10), MPI_Irecv K from right (tag 11),
 *                MPI_Isend K to right (tag 10), MPI_Isend K to left (tag 11); one MPI_Waitall of 4.
 *   2. Waitany:  3 x MPI_Irecv K from pair (tags 20, 21, 22), 3 x MPI_Isend K to pair (same tags);
 *                exactly 6 MPI_Waitany calls, each completing one of the 6 requests.
 *   3. Testsome: MPI_Irecv M from left (tag 40), MPI_Isend M to right (tag 40); MPI_Testsome in a
 *                loop until both are done (at least 1 call; the number varies from run to run).
 *   4. Persistent: one MPI_Startall of the 2 persistent requests, one MPI_Waitall of 2.
 * After the loop: 2 x MPI_Request_free. Per iteration per rank: 6 MPI_Isend, 6 MPI_Irecv,
 * 2 MPI_Waitall, 6 MPI_Waitany, 1 MPI_Startall, 2 persistent activations; 14 requests completed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { K = 32, M = 512 };

static void waitall_step(int right, int left, int* out, int* in) {
  MPI_Request requests[4];
  MPI_Irecv(in, K, MPI_INT, left, 10, MPI_COMM_WORLD, &requests[0]);
  MPI_Irecv(in + K, K, MPI_INT, right, 11, MPI_COMM_WORLD, &requests[1]);
  MPI_Isend(out, K, MPI_INT, right, 10, MPI_COMM_WORLD, &requests[2]);
  MPI_Isend(out, K, MPI_INT, left, 11, MPI_COMM_WORLD, &requests[3]);
  MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
}

static void waitany_step(int pair, int* out, int* in) {
  MPI_Request requests[6];
  for (int i = 0; i < 3; ++i)
    MPI_Irecv(in + i * K, K, MPI_INT, pair, 20 + i, MPI_COMM_WORLD, &requests[i]);
  for (int i = 0; i < 3; ++i)
    MPI_Isend(out, K, MPI_INT, pair, 20 + i, MPI_COMM_WORLD, &requests[3 + i]);
  for (int done = 0; done < 6; ++done) {
    int index;
    MPI_Waitany(6, requests, &index, MPI_STATUS_IGNORE);
  }
}

static void testsome_step(int right, int left, double* out, double* in) {
  MPI_Request requests[2];
  MPI_Irecv(in, M, MPI_DOUBLE, left, 40, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(out, M, MPI_DOUBLE, right, 40, MPI_COMM_WORLD, &requests[1]);
  int completed = 0, outcount, indices[2];
  while (completed < 2) {
    MPI_Testsome(2, requests, &outcount, indices, MPI_STATUSES_IGNORE);
    if (outcount != MPI_UNDEFINED)
      completed += outcount;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 10;
  if (size % 2 != 0)
    MPI_Abort(MPI_COMM_WORLD, 2);
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size, pair = rank ^ 1;

  static int out[3 * K], in[3 * K], persistent_out[K], persistent_in[K];
  static double big_out[M], big_in[M];
  for (int i = 0; i < 3 * K; ++i)
    out[i] = rank;
  for (int i = 0; i < K; ++i)
    persistent_out[i] = rank;
  for (int i = 0; i < M; ++i)
    big_out[i] = rank;

  MPI_Request persistent[2];
  MPI_Send_init(persistent_out, K, MPI_INT, right, 30, MPI_COMM_WORLD, &persistent[0]);
  MPI_Recv_init(persistent_in, K, MPI_INT, left, 30, MPI_COMM_WORLD, &persistent[1]);

  long checksum = 0;
  for (int it = 0; it < iterations; ++it) {
    waitall_step(right, left, out, in);
    checksum += in[0] + in[K];
    waitany_step(pair, out, in);
    checksum += in[0];
    testsome_step(right, left, big_out, big_in);
    checksum += (long)big_in[0];
    MPI_Startall(2, persistent);
    MPI_Waitall(2, persistent, MPI_STATUSES_IGNORE);
    checksum += persistent_in[0];
  }
  MPI_Request_free(&persistent[0]);
  MPI_Request_free(&persistent[1]);
  if (rank == 0)
    printf("nonblocking_mix: %d iterations, checksum %ld\n", iterations, checksum);
  MPI_Finalize();
  return 0;
}
