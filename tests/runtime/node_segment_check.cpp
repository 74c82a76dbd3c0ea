// The runtime's node shared-memory segment under real MPI processes, no GPU needed: every rank
// publishes a value in its slot, passes a barrier, and must then see every other rank's value of
// the same round (the barrier's release/acquire ordering); a second barrier keeps a fast rank
// from overwriting its slot before the slow ones have read it. Ranks sleep at random to shuffle
// arrival order. Prints "node_segment_check: ok" from rank 0 and exits 0 when all rounds matched.
// Usage: node_segment_check ROUNDS
#include "transport/node_segment.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 1000;
  commlens::runtime::NodeSegment segment;
  std::string error;
  if (!segment.open(MPI_COMM_WORLD, rank, size, &error)) {
    std::fprintf(stderr, "rank %d: %s\n", rank, error.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::srand(static_cast<unsigned>(rank * 7919 + 1));
  long mismatches = 0;
  std::uint64_t barrier = 0;
  for (int round = 1; round <= rounds; ++round) {
    if (std::rand() % 8 == 0) {
      usleep(static_cast<useconds_t>(std::rand() % 200));
    }
    segment.slot(rank).decline = round * size + rank; // any field: plain stores, made visible by the barrier
    segment.barrier(++barrier);
    for (int peer = 0; peer < size; ++peer) {
      mismatches += segment.slot(peer).decline != round * size + peer;
    }
    segment.barrier(++barrier);
  }
  long total = 0;
  MPI_Reduce(&mismatches, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("node_segment_check: %s (%d rounds, %d ranks, %ld mismatches)\n",
                total == 0 ? "ok" : "FAILED", rounds, size, total);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
