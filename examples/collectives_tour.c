/* collectives_tour: every collective family on MPI_COMM_WORLD, blocking, nonblocking and in place.
 *
 * Usage: collectives_tour ITERATIONS
 *
 * All data is MPI_INT (4 B); K = 16, KI = 8; root is always 0; P = world size; r = rank.
 * "sent/recv" below are the bytes each rank's call sends and posts to receive.
 * Per iteration, in this order:
 *   A. Blocking, out of place (K):
 *      Barrier                 0 / 0
 *      Bcast(K)                root 4K / 0, others 0 / 4K
 *      Reduce(K)               4K / root 4K, others 0
 *      Allreduce(K)            4K / 4K
 *      Gather(K)               4K / root 4KP, others 0 (non-roots pass an ignored recvcount of 999)
 *      Gatherv                 r sends K+r ints / root receives sum_i(K+i) ints, others 0
 *      Scatter(K)              root 4KP, others 0 (ignored sendcount 999) / 4K
 *      Scatterv                root sends sum_i(K+i) ints, others 0 / r receives K+r ints
 *      Allgather(K)            4K / 4KP
 *      Allgatherv              r sends K+r ints / receives sum_i(K+i) ints
 *      Alltoall(K)             4KP / 4KP
 *      Alltoallv               sendcounts[j] = K+j: sum_j(K+j) ints / recvcounts[i] = K+r: P(K+r) ints
 *      Alltoallw               sendcounts[j] = K+r: P(K+r) ints / recvcounts[i] = K+i: sum_i(K+i) ints
 *      Reduce_scatter          recvcounts[i] = K+i: sends sum_i(K+i) ints / receives K+r ints
 *      Reduce_scatter_block(K) 4KP / 4K
 *      Scan(K), Exscan(K)      4K / 4K (rank 0's Exscan too: its receive buffer is posted)
 *   B. The same 17 calls as nonblocking I* forms (Ibarrier ... Iexscan) with the same arguments
 *      and bytes, each completed at once by one MPI_Wait (17 MPI_Wait per iteration).
 *   C. MPI_IN_PLACE forms (KI): an in-place call counts the bytes the same call would count with
 *      separate buffers; the arguments MPI ignores (set to the junk count 12345) are never read:
 *      Allreduce(IN_PLACE, KI)               4KI / 4KI
 *      Reduce(KI), root IN_PLACE sendbuf     4KI / root 4KI, others 0
 *      Gather(KI), root IN_PLACE sendbuf     4KI / root 4KI*P, others 0
 *      Scatter(KI), root IN_PLACE recvbuf    root 4KI*P, others 0 / 4KI
 *      Allgather(IN_PLACE, KI)               4KI / 4KI*P
 * Prints a checksum on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K = 16, KI = 8, JUNK = 12345, IGNORED = 999 };

typedef struct {
  int rank, size;
  int *send, *recv;
  int *counts_k_plus_i, *displs_k_plus_i; /* K+i for each i, prefix sums */
  int *counts_k_plus_r, *displs_k_plus_r; /* K+r for everyone */
  int *bytes_k_plus_i, *bytes_k_plus_r;   /* displacements in bytes, for the w variant */
  MPI_Datatype* types;
} Tour;

/* Runs one blocking collective (request == NULL) or its nonblocking form. */
#define CALL(request, blocking, nonblocking, ...)                                                            \
  do {                                                                                                       \
    if (request) {                                                                                           \
      nonblocking(__VA_ARGS__, request);                                                                     \
      MPI_Wait(request, MPI_STATUS_IGNORE);                                                                  \
    } else {                                                                                                 \
      blocking(__VA_ARGS__);                                                                                 \
    }                                                                                                        \
  } while (0)

static void out_of_place(Tour* t, MPI_Request* req) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int root = 0, is_root = t->rank == root, r = t->rank;
  if (req) {
    MPI_Ibarrier(w, req);
    MPI_Wait(req, MPI_STATUS_IGNORE);
  } else {
    MPI_Barrier(w);
  }
  CALL(req, MPI_Bcast, MPI_Ibcast, t->send, K, MPI_INT, root, w);
  CALL(req, MPI_Reduce, MPI_Ireduce, t->send, t->recv, K, MPI_INT, MPI_SUM, root, w);
  CALL(req, MPI_Allreduce, MPI_Iallreduce, t->send, t->recv, K, MPI_INT, MPI_SUM, w);
  CALL(req, MPI_Gather, MPI_Igather, t->send, K, MPI_INT, t->recv, is_root ? K : IGNORED, MPI_INT, root, w);
  CALL(req, MPI_Gatherv, MPI_Igatherv, t->send, K + r, MPI_INT, t->recv, t->counts_k_plus_i,
       t->displs_k_plus_i, MPI_INT, root, w);
  CALL(req, MPI_Scatter, MPI_Iscatter, t->send, is_root ? K : IGNORED, MPI_INT, t->recv, K, MPI_INT, root, w);
  CALL(req, MPI_Scatterv, MPI_Iscatterv, t->send, t->counts_k_plus_i, t->displs_k_plus_i, MPI_INT, t->recv,
       K + r, MPI_INT, root, w);
  CALL(req, MPI_Allgather, MPI_Iallgather, t->send, K, MPI_INT, t->recv, K, MPI_INT, w);
  CALL(req, MPI_Allgatherv, MPI_Iallgatherv, t->send, K + r, MPI_INT, t->recv, t->counts_k_plus_i,
       t->displs_k_plus_i, MPI_INT, w);
  CALL(req, MPI_Alltoall, MPI_Ialltoall, t->send, K, MPI_INT, t->recv, K, MPI_INT, w);
  CALL(req, MPI_Alltoallv, MPI_Ialltoallv, t->send, t->counts_k_plus_i, t->displs_k_plus_i, MPI_INT, t->recv,
       t->counts_k_plus_r, t->displs_k_plus_r, MPI_INT, w);
  CALL(req, MPI_Alltoallw, MPI_Ialltoallw, t->send, t->counts_k_plus_r, t->bytes_k_plus_r, t->types, t->recv,
       t->counts_k_plus_i, t->bytes_k_plus_i, t->types, w);
  CALL(req, MPI_Reduce_scatter, MPI_Ireduce_scatter, t->send, t->recv, t->counts_k_plus_i, MPI_INT, MPI_SUM,
       w);
  CALL(req, MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, t->send, t->recv, K, MPI_INT, MPI_SUM, w);
  CALL(req, MPI_Scan, MPI_Iscan, t->send, t->recv, K, MPI_INT, MPI_SUM, w);
  CALL(req, MPI_Exscan, MPI_Iexscan, t->send, t->recv, K, MPI_INT, MPI_SUM, w);
}

static void in_place(Tour* t) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int root = 0, is_root = t->rank == root;
  MPI_Allreduce(MPI_IN_PLACE, t->recv, KI, MPI_INT, MPI_SUM, w);
  MPI_Reduce(is_root ? MPI_IN_PLACE : t->send, t->recv, KI, MPI_INT, MPI_SUM, root, w);
  if (is_root)
    MPI_Gather(MPI_IN_PLACE, JUNK, MPI_INT, t->recv, KI, MPI_INT, root, w);
  else
    MPI_Gather(t->send, KI, MPI_INT, NULL, IGNORED, MPI_INT, root, w);
  if (is_root)
    MPI_Scatter(t->send, KI, MPI_INT, MPI_IN_PLACE, JUNK, MPI_INT, root, w);
  else
    MPI_Scatter(NULL, IGNORED, MPI_INT, t->recv, KI, MPI_INT, root, w);
  MPI_Allgather(MPI_IN_PLACE, JUNK, MPI_INT, t->recv, KI, MPI_INT, w);
}

static int* prefix_sums(const int* counts, int n, int scale) {
  int* displs = malloc(sizeof(int) * n);
  for (int i = 0, sum = 0; i < n; sum += counts[i], ++i)
    displs[i] = sum * scale;
  return displs;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Tour t;
  MPI_Comm_rank(MPI_COMM_WORLD, &t.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &t.size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 10;
  const int p = t.size, elements = 2 * p * (K + p);
  t.send = malloc(sizeof(int) * elements);
  t.recv = malloc(sizeof(int) * elements);
  for (int i = 0; i < elements; ++i)
    t.send[i] = t.rank + i;
  t.counts_k_plus_i = malloc(sizeof(int) * p);
  t.counts_k_plus_r = malloc(sizeof(int) * p);
  t.types = malloc(sizeof(MPI_Datatype) * p);
  for (int i = 0; i < p; ++i) {
    t.counts_k_plus_i[i] = K + i;
    t.counts_k_plus_r[i] = K + t.rank;
    t.types[i] = MPI_INT;
  }
  t.displs_k_plus_i = prefix_sums(t.counts_k_plus_i, p, 1);
  t.displs_k_plus_r = prefix_sums(t.counts_k_plus_r, p, 1);
  t.bytes_k_plus_i = prefix_sums(t.counts_k_plus_i, p, (int)sizeof(int));
  t.bytes_k_plus_r = prefix_sums(t.counts_k_plus_r, p, (int)sizeof(int));

  long checksum = 0;
  MPI_Request request;
  for (int it = 0; it < iterations; ++it) {
    out_of_place(&t, NULL);
    checksum += t.recv[0];
    out_of_place(&t, &request);
    checksum += t.recv[0];
    memcpy(t.recv, t.send, sizeof(int) * elements);
    in_place(&t);
    checksum += t.recv[0];
  }
  if (t.rank == 0)
    printf("collectives_tour: %d iterations, checksum %ld\n", iterations, checksum);
  MPI_Finalize();
  return 0;
}
