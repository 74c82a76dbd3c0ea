/* one_sided: MPI-3 RMA with fence synchronisation.
 *
 * Usage: one_sided ITERATIONS
 *
 * Setup: MPI_Win_create over 3K MPI_INT per rank (K = 128, 512 B) on MPI_COMM_WORLD.
 * Per iteration, right = (r+1)%P, left = (r-1+P)%P:
 *   MPI_Win_fence; MPI_Put K ints to right (512 B sent);
 *   MPI_Win_fence; MPI_Get K ints from left (512 B received);
 *   MPI_Win_fence; MPI_Accumulate K ints (MPI_SUM) to right (512 B sent);
 *   MPI_Win_fence.
 * So 4 MPI_Win_fence, 1 MPI_Put, 1 MPI_Get, 1 MPI_Accumulate per iteration. After: MPI_Win_free.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { K = 128 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 10;
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;

  static int window_memory[3 * K], origin[K], fetched[K];
  for (int i = 0; i < K; ++i)
    origin[i] = rank;
  MPI_Win win;
  MPI_Win_create(window_memory, sizeof(window_memory), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  long checksum = 0;
  for (int it = 0; it < iterations; ++it) {
    MPI_Win_fence(0, win);
    MPI_Put(origin, K, MPI_INT, right, 0, K, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Get(fetched, K, MPI_INT, left, 0, K, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Accumulate(origin, K, MPI_INT, right, K, K, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    checksum += fetched[0] + window_memory[K];
  }
  MPI_Win_free(&win);
  if (rank == 0)
    printf("one_sided: %d iterations, checksum %ld\n", iterations, checksum);
  MPI_Finalize();
  return 0;
}
