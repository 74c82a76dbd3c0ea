/* split_comms: communicators made by MPI_Comm_split and MPI_Comm_dup, used, then freed.
 *
 * Usage: split_comms ITERATIONS     (world size P must be a multiple of 4)
 *
 * Setup: MPI_Comm_split(MPI_COMM_WORLD, color = r < P/2 ? 0 : 1, key = r) -> "half" (H = P/2
 * ranks: world ranks 0..H-1 or H..P-1, in world order); MPI_Comm_dup(half) -> "dup".
 * Per iteration, with l = rank in half, next = (l+1)%H, prev = (l-1+H)%H (K = 64 MPI_INT, 256 B):
 *   on half: MPI_Allreduce(K) 256 / 256; MPI_Bcast(K, root 0 of half): root 256 / 0, others 0 / 256;
 *            MPI_Send K to next (tag 7) and MPI_Recv K from prev (tag 7): peers are recorded as the
 *            world ranks of next and prev;
 *   on dup:  MPI_Allreduce(2K) 512 / 512; MPI_Barrier.
 * After the loop: MPI_Comm_free(dup), MPI_Comm_free(half).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { K = 64 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 10;
  if (size % 4 != 0)
    MPI_Abort(MPI_COMM_WORLD, 2);

  MPI_Comm half, dup;
  MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2 ? 0 : 1, rank, &half);
  MPI_Comm_dup(half, &dup);
  int l, h;
  MPI_Comm_rank(half, &l);
  MPI_Comm_size(half, &h);
  const int next = (l + 1) % h, prev = (l - 1 + h) % h;

  int out[2 * K], in[2 * K];
  for (int i = 0; i < 2 * K; ++i)
    out[i] = rank;
  long checksum = 0;
  for (int it = 0; it < iterations; ++it) {
    MPI_Allreduce(out, in, K, MPI_INT, MPI_SUM, half);
    checksum += in[0];
    MPI_Bcast(l == 0 ? out : in, K, MPI_INT, 0, half);
    if (l % 2 == 0) {
      MPI_Send(out, K, MPI_INT, next, 7, half);
      MPI_Recv(in, K, MPI_INT, prev, 7, half, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(in, K, MPI_INT, prev, 7, half, MPI_STATUS_IGNORE);
      MPI_Send(out, K, MPI_INT, next, 7, half);
    }
    checksum += in[0];
    MPI_Allreduce(out, in, 2 * K, MPI_INT, MPI_SUM, dup);
    MPI_Barrier(dup);
    checksum += in[0];
  }
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
  if (rank == 0)
    printf("split_comms: %d iterations, checksum %ld\n", iterations, checksum);
  MPI_Finalize();
  return 0;
}
