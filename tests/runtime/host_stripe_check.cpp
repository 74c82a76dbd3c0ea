// The host path of striped transfers (host_stripe.hpp over stage_ring.hpp) between two real MPI
// processes: what it needs is two ranks, not two GPUs, so it runs on one. Both ranks exchange the
// same byte range of their device buffers through the pinned rings, call after call (the rings'
// counters go on across calls), from 1 byte to three rings' worth at odd offsets, and each must
// land exactly the other's bytes. Prints "host_stripe_check: ok" from rank 0 when every byte of
// every call matched, "host_stripe_check: skipped: ..." without a GPU.
// Usage: mpirun -np 2 host_stripe_check
#include "transport/host_stripe.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

using commlens::runtime::HostStripe;
using commlens::runtime::kStageChunkBytes;
using commlens::runtime::kStageRingBytes;

unsigned char byte_of(int rank, std::size_t index) {
  return static_cast<unsigned char>(index * 131 + static_cast<std::size_t>(rank) * 17 + (index >> 12));
}

int failures = 0;

void fail(int rank, const std::string& what) {
  if (failures++ < 10) {
    std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
  }
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 || size != 2) {
    if (rank == 0) {
      std::printf("host_stripe_check: skipped: %s\n", size != 2 ? "needs exactly 2 ranks" : "no GPU");
    }
    MPI_Finalize();
    return 0;
  }
  cudaSetDevice(rank % devices);
  const std::size_t total = 3 * kStageRingBytes + 4099;
  std::vector<unsigned char> mine(total);
  for (std::size_t i = 0; i < total; ++i) {
    mine[i] = byte_of(rank, i);
  }
  void* input = nullptr;
  if (cudaMalloc(&input, total) != cudaSuccess ||
      cudaMemcpy(input, mine.data(), total, cudaMemcpyHostToDevice) != cudaSuccess) {
    std::fprintf(stderr, "rank %d: no device buffer\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  {
    HostStripe stripe;
    if (!stripe.open(MPI_COMM_WORLD, rank)) {
      std::fprintf(stderr, "rank %d: the stripe could not be opened\n", rank);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const std::pair<std::size_t, std::size_t> calls[] = {{0, 1},
                                                         {7, 4099},
                                                         {0, kStageChunkBytes},
                                                         {3, kStageChunkBytes + 1},
                                                         {100, kStageRingBytes},
                                                         {5, 3 * kStageRingBytes},
                                                         {1, 2 * kStageChunkBytes - 1}};
    std::vector<unsigned char> landed(total);
    for (int round = 0; round < 2; ++round) {
      for (const auto& [offset, bytes] : calls) {
        const std::string what = "round " + std::to_string(round) + ", " + std::to_string(bytes) + " B at " +
                                 std::to_string(offset);
        const HostStripe::Exchange exchange = stripe.exchange(input, offset, bytes);
        const std::uint32_t chunks =
            static_cast<std::uint32_t>((bytes + kStageChunkBytes - 1) / kStageChunkBytes);
        if (exchange.cuda_error != 0 || exchange.chunks != chunks) {
          fail(rank, what + ": CUDA error " + std::to_string(exchange.cuda_error) + ", " +
                         std::to_string(exchange.chunks) + " chunks (expected " + std::to_string(chunks) +
                         ")");
          continue;
        }
        cudaMemcpy(landed.data(), exchange.peer_data, bytes, cudaMemcpyDeviceToHost);
        for (std::size_t i = 0; i < bytes; ++i) {
          if (landed[i] != byte_of(1 - rank, offset + i)) {
            fail(rank, what + ": byte " + std::to_string(i) + " is not the peer's");
            break;
          }
        }
      }
    }
  }
  cudaFree(input);
  int all_failures = 0;
  MPI_Reduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf(all_failures == 0 ? "host_stripe_check: ok\n" : "host_stripe_check: %d failures\n",
                all_failures);
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
