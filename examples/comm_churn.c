/* comm_churn: a communicator duplicated, used once and freed at every step, then nonblocking
 * completions, the pattern whose calls a fixed-size summary table used to lose.
 *
 * Usage: comm_churn STEPS     (world size P must be even)
 *
 * Per rank, STEPS times: MPI_Comm_dup(MPI_COMM_WORLD), MPI_Barrier on the duplicate, MPI_Comm_free.
 * Then, with pair = r^1 on MPI_COMM_WORLD (K = 4 MPI_INT, 16 B, tag 9): MPI_Irecv from pair,
 * MPI_Isend to pair, MPI_Waitsome on the receive alone, MPI_Waitsome on the send alone (each
 * returns exactly that one request), and one MPI_Testany on the two requests, both MPI_REQUEST_NULL
 * by then (flag true, index MPI_UNDEFINED). Per rank: STEPS MPI_Comm_dup, MPI_Barrier and
 * MPI_Comm_free; 1 MPI_Irecv, 1 MPI_Isend, 2 MPI_Waitsome, 1 MPI_Testany.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { K = 4, TAG = 9 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 4000;
  if (size % 2 != 0 || steps < 0) {
    if (rank == 0)
      fprintf(stderr, "comm_churn: needs an even number of ranks and STEPS >= 0\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int step = 0; step < steps; ++step) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Barrier(dup);
    MPI_Comm_free(&dup);
  }

  const int pair = rank ^ 1;
  int out[K], in[K];
  for (int i = 0; i < K; ++i)
    out[i] = rank * K + i;
  MPI_Request requests[2];
  MPI_Irecv(in, K, MPI_INT, pair, TAG, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(out, K, MPI_INT, pair, TAG, MPI_COMM_WORLD, &requests[1]);
  int outcount = 0, indices[1];
  MPI_Waitsome(1, &requests[0], &outcount, indices, MPI_STATUSES_IGNORE);
  MPI_Waitsome(1, &requests[1], &outcount, indices, MPI_STATUSES_IGNORE);
  int index = 0, flag = 0;
  MPI_Testany(2, requests, &index, &flag, MPI_STATUS_IGNORE);

  int wrong = flag == 0 || index != MPI_UNDEFINED;
  for (int i = 0; i < K; ++i)
    wrong |= in[i] != pair * K + i;
  if (wrong)
    fprintf(stderr, "comm_churn: rank %d got wrong data or completion\n", rank);
  MPI_Finalize();
  return wrong;
}
