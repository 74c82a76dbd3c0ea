/* ring_pingpong: blocking point-to-point with several peers and tags.
 *
 * Usage: ring_pingpong ITERATIONS     (world size P must be even and at least 4)
 *
 * Communication, all on MPI_COMM_WORLD, per iteration, for rank r with
 * right = (r+1)%P, left = (r-1+P)%P, across = (r+P/2)%P, pair = r^1:
 *   1. ring, tag 1:     MPI_Send 256 MPI_INT (1024 B) to right; MPI_Recv 256 MPI_INT from left.
 *   2. across, tag 2:   MPI_Send 1000 MPI_DOUBLE (8000 B) to across; MPI_Recv 1000 MPI_DOUBLE from across.
 *   3. pair, tag 3:     MPI_Sendrecv 100 MPI_FLOAT (400 B) to pair and 100 MPI_FLOAT from pair.
 *   4. gather, tag 4:   ranks r != 0 MPI_Send 10 MPI_INT (40 B) to rank 0; rank 0 posts P-1
 *                       MPI_Recv of 10 MPI_INT from MPI_ANY_SOURCE.
 *   5. nowhere, tag 5:  MPI_Send 5 MPI_INT to MPI_PROC_NULL: nothing is sent, so it counts 0 bytes
 *                       (peer -2).
 * So per iteration every rank makes 3 MPI_Send (4 on ranks != 0), 2 MPI_Recv (P+1 on rank 0) and
 * 1 MPI_Sendrecv. Nothing else communicates. Prints a checksum on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { RING_INTS = 256, ACROSS_DOUBLES = 1000, PAIR_FLOATS = 100, GATHER_INTS = 10, NULL_INTS = 5 };

static void ring_step(int rank, int right, int left, int* out, int* in) {
  /* Even ranks send first, odd ranks receive first: no reliance on eager buffering. */
  if (rank % 2 == 0) {
    MPI_Send(out, RING_INTS, MPI_INT, right, 1, MPI_COMM_WORLD);
    MPI_Recv(in, RING_INTS, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(in, RING_INTS, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(out, RING_INTS, MPI_INT, right, 1, MPI_COMM_WORLD);
  }
}

static void across_step(int rank, int size, int across, double* out, double* in) {
  if (rank < size / 2) {
    MPI_Send(out, ACROSS_DOUBLES, MPI_DOUBLE, across, 2, MPI_COMM_WORLD);
    MPI_Recv(in, ACROSS_DOUBLES, MPI_DOUBLE, across, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(in, ACROSS_DOUBLES, MPI_DOUBLE, across, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(out, ACROSS_DOUBLES, MPI_DOUBLE, across, 2, MPI_COMM_WORLD);
  }
}

static long gather_step(int rank, int size, int* out, int* in) {
  long sum = 0;
  if (rank == 0) {
    for (int i = 0; i < size - 1; ++i) {
      MPI_Recv(in, GATHER_INTS, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sum += in[0];
    }
  } else {
    MPI_Send(out, GATHER_INTS, MPI_INT, 0, 4, MPI_COMM_WORLD);
  }
  return sum;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 10;
  if (size < 4 || size % 2 != 0) {
    if (rank == 0)
      fprintf(stderr, "ring_pingpong: needs an even number of ranks >= 4\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  const int across = (rank + size / 2) % size, pair = rank ^ 1;

  int ring_out[RING_INTS], ring_in[RING_INTS], gather_out[GATHER_INTS], gather_in[GATHER_INTS];
  int null_out[NULL_INTS] = {0};
  double across_out[ACROSS_DOUBLES], across_in[ACROSS_DOUBLES];
  float pair_out[PAIR_FLOATS], pair_in[PAIR_FLOATS];
  for (int i = 0; i < RING_INTS; ++i)
    ring_out[i] = rank;
  for (int i = 0; i < ACROSS_DOUBLES; ++i)
    across_out[i] = rank;
  for (int i = 0; i < PAIR_FLOATS; ++i)
    pair_out[i] = (float)rank;
  for (int i = 0; i < GATHER_INTS; ++i)
    gather_out[i] = rank;

  long checksum = 0;
  for (int it = 0; it < iterations; ++it) {
    ring_step(rank, right, left, ring_out, ring_in);
    across_step(rank, size, across, across_out, across_in);
    MPI_Sendrecv(pair_out, PAIR_FLOATS, MPI_FLOAT, pair, 3, pair_in, PAIR_FLOATS, MPI_FLOAT, pair, 3,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    checksum += gather_step(rank, size, gather_out, gather_in);
    MPI_Send(null_out, NULL_INTS, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD);
    checksum += ring_in[0] + (long)across_in[0] + (long)pair_in[0];
  }
  if (rank == 0)
    printf("ring_pingpong: %d iterations, checksum %ld\n", iterations, checksum);
  MPI_Finalize();
  return 0;
}
