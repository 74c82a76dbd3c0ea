/* early_wildcards: wildcard receives posted right after MPI_Init, before any other call. A profiler
 * that exchanges messages of its own on MPI_COMM_WORLD at start-up must leave none of them for
 * these receives to match, whatever tag the program uses.
 *
 * Usage: early_wildcards
 *
 * Every rank but 0 sends rank 0 two MPI_INT messages holding 1000 * its rank + the tag, with tags
 * 0 and 17228; rank 0 sends every other rank one such message with tag 17228. Every message is
 * received with MPI_ANY_SOURCE and MPI_ANY_TAG and checked against its status. Prints
 * "early_wildcards: N messages matched" on rank 0, or a line naming the first stray message and
 * exit status 1.
 */
#include <mpi.h>
#include <stdio.h>

enum { kOddTag = 17228 };

static int check(int value, const MPI_Status* status, int rank) {
  int count = 0;
  MPI_Get_count(status, MPI_INT, &count);
  if (count == 1 && value == 1000 * status->MPI_SOURCE + status->MPI_TAG)
    return 1;
  fprintf(stderr, "early_wildcards: rank %d got %d from %d with tag %d (%d ints)\n", rank, value,
          status->MPI_SOURCE, status->MPI_TAG, count);
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, ok = 1, matched = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int tags[2] = {0, kOddTag};
  if (rank == 0) {
    for (int i = 0; i < 2 * (size - 1); ++i) {
      int value = -1;
      MPI_Status status;
      MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
      ok &= check(value, &status, rank);
      ++matched;
    }
    for (int peer = 1; peer < size; ++peer) {
      const int value = kOddTag;
      MPI_Send(&value, 1, MPI_INT, peer, kOddTag, MPI_COMM_WORLD);
    }
  } else {
    int value = -1;
    MPI_Status status;
    MPI_Request request;
    MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &request);
    for (int i = 0; i < 2; ++i) {
      const int mine = 1000 * rank + tags[i];
      MPI_Send(&mine, 1, MPI_INT, 0, tags[i], MPI_COMM_WORLD);
    }
    MPI_Wait(&request, &status);
    ok &= check(value, &status, rank);
  }
  int everywhere = 0;
  MPI_Allreduce(&ok, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0 && everywhere)
    printf("early_wildcards: %d messages matched\n", matched + size - 1);
  MPI_Finalize();
  return everywhere ? 0 : 1;
}
