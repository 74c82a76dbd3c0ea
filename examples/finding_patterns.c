/* finding_patterns: one program per pattern `commlens report` finds, for its tests and to see what a
 * finding looks like. Sleeps stand for computation: a sleeping rank leaves its core to the others,
 * so the patterns show the same on a machine with fewer cores than ranks.
 *
 * Usage: finding_patterns PATTERN [ITERATIONS [DELAY_MS]]   (defaults: 40 iterations, 20 ms)
 * Ranks pair up (0-1, 2-3, ...; an even number of ranks); "the first" of a pair is the even rank in
 * even iterations and the odd rank in odd ones, so that over the run every rank does the same work.
 *
 *   late-sender     per iteration: the first sleeps DELAY, then MPI_Send of 4 KiB (tag 1) to its
 *                   partner, which calls MPI_Recv at once and waits for it.
 *   late-receiver   per iteration: the first calls MPI_Ssend of 4 KiB (tag 2) at once; its partner
 *                   sleeps DELAY, then MPI_Recv: the synchronous send waits for the receive.
 *   collective-wait per iteration: rank (iteration mod size) sleeps DELAY, then every rank calls
 *                   MPI_Allreduce of 1024 doubles (8 KiB): the others wait for it.
 *   imbalance       MPI_Pcontrol(3) first (phase 1 starts: phase 0 holds little but MPI_Init); each
 *                   iteration every rank sleeps DELAY, the last rank twice as long, then MPI_Allreduce of
 *                   1024 doubles.
 *   small-messages  ITERATIONS x 1000 times: MPI_Sendrecv of one int (4 B, tag 3) around a ring,
 *                   to rank + 1 and from rank - 1 (modulo the size), so that the ranks keep step.
 *   unexpected-queue per iteration: every rank sleeps DELAY; the first sends 64 messages of one int
 *                   (tags 0-63) with MPI_Send; every rank calls MPI_Barrier, inside which the
 *                   partner's MPI library takes the messages in before any receive is posted; the
 *                   partner then receives them with MPI_Recv, tags in order.
 *   churn           per iteration, a training step: MPI_Pcontrol(2), sleep DELAY, MPI_Comm_dup of
 *                   MPI_COMM_WORLD, MPI_Type_vector (2 blocks of 1 int, stride 2) and MPI_Type_commit,
 *                   MPI_Sendrecv of one such element (8 B of a 3-int buffer, tag 4) with the partner on
 *                   the duplicate,
 *                   MPI_Type_free, MPI_Comm_free; MPI_Pcontrol(2) once after the last step.
 *   short           nothing but the MPI_Barrier every pattern ends with.
 *   balanced        per iteration: every rank sleeps DELAY, MPI_Sendrecv of 64 KiB (tag 5) with its
 *                   partner, MPI_Allreduce of 8192 doubles (64 KiB): none of the patterns above.
 * Every pattern ends with one MPI_Barrier, and rank 0 prints "finding_patterns PATTERN: done".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kMessageInts = 1024, kReduceDoubles = 1024, kQueuedMessages = 64, kSmallPerIteration = 1000 };

static int rank, size, partner;
static long delay_ms = 20;

static void sleep_ms(long ms) {
  struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

/* Whether this rank is the first of its pair in iteration `iteration`. */
static int first(int iteration) {
  return (rank % 2) == (iteration % 2);
}

static void late_sender(int iterations) {
  static int message[kMessageInts];
  for (int i = 0; i < iterations; ++i) {
    if (first(i)) {
      sleep_ms(delay_ms);
      MPI_Send(message, kMessageInts, MPI_INT, partner, 1, MPI_COMM_WORLD);
    } else {
      MPI_Recv(message, kMessageInts, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
}

static void late_receiver(int iterations) {
  static int message[kMessageInts];
  for (int i = 0; i < iterations; ++i) {
    if (first(i)) {
      MPI_Ssend(message, kMessageInts, MPI_INT, partner, 2, MPI_COMM_WORLD);
    } else {
      sleep_ms(delay_ms);
      MPI_Recv(message, kMessageInts, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
}

static void allreduce(int doubles) {
  double* values = calloc((size_t)doubles, sizeof *values);
  MPI_Allreduce(MPI_IN_PLACE, values, doubles, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  free(values);
}

static void collective_wait(int iterations) {
  for (int i = 0; i < iterations; ++i) {
    if (i % size == rank)
      sleep_ms(delay_ms);
    allreduce(kReduceDoubles);
  }
}

static void imbalance(int iterations) {
  MPI_Pcontrol(3);
  for (int i = 0; i < iterations; ++i) {
    sleep_ms(rank == size - 1 ? 2 * delay_ms : delay_ms);
    allreduce(kReduceDoubles);
  }
}

static void small_messages(int iterations) {
  int out = rank, in = 0;
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  for (long i = 0; i < (long)iterations * kSmallPerIteration; ++i)
    MPI_Sendrecv(&out, 1, MPI_INT, next, 3, &in, 1, MPI_INT, previous, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void unexpected_queue(int iterations) {
  int values[kQueuedMessages] = {0};
  for (int i = 0; i < iterations; ++i) {
    sleep_ms(delay_ms);
    if (first(i))
      for (int tag = 0; tag < kQueuedMessages; ++tag)
        MPI_Send(&values[tag], 1, MPI_INT, partner, tag, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!first(i))
      for (int tag = 0; tag < kQueuedMessages; ++tag)
        MPI_Recv(&values[tag], 1, MPI_INT, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

static void churn(int iterations) {
  int out[3] = {rank, rank, rank}, in[3] = {0, 0, 0}; /* one vector element spans 3 ints */
  for (int i = 0; i < iterations; ++i) {
    MPI_Pcontrol(2);
    sleep_ms(delay_ms);
    MPI_Comm step;
    MPI_Comm_dup(MPI_COMM_WORLD, &step);
    MPI_Datatype pair;
    MPI_Type_vector(2, 1, 2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Sendrecv(out, 1, pair, partner, 4, in, 1, pair, partner, 4, step, MPI_STATUS_IGNORE);
    MPI_Type_free(&pair);
    MPI_Comm_free(&step);
  }
  MPI_Pcontrol(2);
}

static void balanced(int iterations) {
  enum { kBytes = 64 * 1024 };
  static char out[kBytes], in[kBytes];
  for (int i = 0; i < iterations; ++i) {
    sleep_ms(delay_ms);
    MPI_Sendrecv(out, kBytes, MPI_BYTE, partner, 5, in, kBytes, MPI_BYTE, partner, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    allreduce(kBytes / (int)sizeof(double));
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* pattern = argc > 1 ? argv[1] : "";
  const int iterations = argc > 2 ? atoi(argv[2]) : 40;
  if (argc > 3)
    delay_ms = atol(argv[3]);
  partner = rank ^ 1;
  if (size % 2 != 0 || iterations < 1 || delay_ms < 0) {
    if (rank == 0)
      fprintf(stderr, "finding_patterns: needs an even number of ranks, ITERATIONS >= 1, DELAY_MS >= 0\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  static const struct {
    const char* name;
    void (*run)(int);
  } kPatterns[] = {{"late-sender", late_sender},
                   {"late-receiver", late_receiver},
                   {"collective-wait", collective_wait},
                   {"imbalance", imbalance},
                   {"small-messages", small_messages},
                   {"unexpected-queue", unexpected_queue},
                   {"churn", churn},
                   {"balanced", balanced}};
  int known = strcmp(pattern, "short") == 0;
  for (size_t i = 0; i < sizeof kPatterns / sizeof kPatterns[0]; ++i)
    if (strcmp(pattern, kPatterns[i].name) == 0) {
      kPatterns[i].run(iterations);
      known = 1;
    }
  if (!known) {
    if (rank == 0)
      fprintf(stderr,
              "finding_patterns: unknown pattern '%s' (late-sender, late-receiver, collective-wait, "
              "imbalance, small-messages, unexpected-queue, churn, short, balanced)\n",
              pattern);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("finding_patterns %s: done\n", pattern);
  MPI_Finalize();
  return 0;
}
