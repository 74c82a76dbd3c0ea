// Cost of commlens' per-call NVTX range (push with a registered name and a 64-bit payload, then
// pop) when no NVTX tool is attached: the price every MPI call pays for Nsight Systems support.
// Usage: nvtx_range_cost [PAIRS]; prints ns per push/pop pair. No GPU needed.
#include "mpi_nvtx_ranges.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const long pairs = argc > 1 ? std::atol(argv[1]) : 20'000'000;
  commlens::nvtx::start_mpi_ranges({{"MPI_Send", "p2p"}});
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < pairs; ++i) {
    commlens::nvtx::push_mpi_range(0, static_cast<std::uint64_t>(i));
    commlens::nvtx::pop_mpi_range();
  }
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  std::printf("nvtx push+pop, no tool attached: %.2f ns per MPI call (%ld pairs)\n", elapsed.count() / pairs,
              pairs);
  return 0;
}
