// The collectives on device buffers that NCCL also has, the commlens runtime against its baseline
// and NCCL in one run: allreduce, allgather, reduce-scatter, bcast and reduce.
// Run under `COMMLENS_RUNTIME=ab` (bench/runtime_collectives.sh does): calls of one signature
// alternate runtime, baseline, runtime, ... starting with the runtime (docs/runtime.md), so the
// even-numbered calls of each collective and size time the runtime and the odd ones the baseline
// (host staging on an MPI that is not CUDA-aware). NCCL's call of the same collective on the same
// buffers is timed in the same process, when every rank has a GPU of its own (NCCL refuses two
// ranks on one GPU; with ranks sharing GPUs its columns say nan).
//
// Sizes and bus bandwidths are nccl-tests': the size is the whole buffer (allgather's output,
// reduce-scatter's input, the others' one buffer), algorithm bandwidth is size / time, and bus
// bandwidth multiplies it by 2 (P-1) / P for allreduce, (P-1) / P for allgather and reduce-scatter
// and 1 for bcast and reduce (rooted at rank 0). Times are medians over ITERATIONS of the slowest
// rank. Sizes are 8 B, 1 KiB, 8 KiB, 64 KiB and 4x steps beyond, to MAX_BYTES; allgather's and
// reduce-scatter's are rounded down to a whole number of floats per rank (at least one).
// Usage: runtime_collectives ITERATIONS MAX_BYTES COLLECTIVE... [in-place]
//   COLLECTIVE: allreduce, allgather, reduce_scatter, bcast or reduce; in-place: allreduce with
//   MPI_IN_PLACE (the runtime's two-shot algorithm; otherwise one-shot for two ranks).
#include "gpu_job.hpp"

#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

enum class Collective { Allreduce, Allgather, ReduceScatter, Bcast, Reduce };

struct Named {
  Collective collective;
  const char* name;
};
constexpr Named kCollectives[] = {{Collective::Allreduce, "allreduce"},
                                  {Collective::Allgather, "allgather"},
                                  {Collective::ReduceScatter, "reduce_scatter"},
                                  {Collective::Bcast, "bcast"},
                                  {Collective::Reduce, "reduce"}};

// nccl-tests' factor from algorithm to bus bandwidth.
double bus_factor(Collective collective, int ranks) {
  switch (collective) {
  case Collective::Allreduce:
    return 2.0 * (ranks - 1) / ranks;
  case Collective::Allgather:
  case Collective::ReduceScatter:
    return double(ranks - 1) / ranks;
  case Collective::Bcast:
  case Collective::Reduce:
    return 1.0;
  }
  return 1.0;
}

// Whether the whole buffer is split in one block per rank.
bool per_rank_blocks(Collective collective) {
  return collective == Collective::Allgather || collective == Collective::ReduceScatter;
}

struct Buffers {
  float* send = nullptr;
  float* receive = nullptr;
};

// One call through MPI of `size` bytes (whole buffer); `block` is the bytes a rank owns.
void call_mpi(Collective collective, std::size_t size, std::size_t block, const Buffers& buffers,
              bool in_place) {
  const int floats = static_cast<int>(size / sizeof(float));
  const int block_floats = static_cast<int>(block / sizeof(float));
  switch (collective) {
  case Collective::Allreduce:
    MPI_Allreduce(in_place ? MPI_IN_PLACE : buffers.send, buffers.receive, floats, MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
    break;
  case Collective::Allgather:
    MPI_Allgather(buffers.send, block_floats, MPI_FLOAT, buffers.receive, block_floats, MPI_FLOAT,
                  MPI_COMM_WORLD);
    break;
  case Collective::ReduceScatter:
    MPI_Reduce_scatter_block(buffers.send, buffers.receive, block_floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    break;
  case Collective::Bcast:
    MPI_Bcast(buffers.receive, floats, MPI_FLOAT, 0, MPI_COMM_WORLD);
    break;
  case Collective::Reduce:
    MPI_Reduce(buffers.send, buffers.receive, floats, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    break;
  }
}

// The same call through NCCL, queued on `stream`.
ncclResult_t call_nccl(Collective collective, std::size_t size, std::size_t block, const Buffers& buffers,
                       bool in_place, ncclComm_t comm, cudaStream_t stream) {
  const std::size_t floats = size / sizeof(float);
  const std::size_t block_floats = block / sizeof(float);
  switch (collective) {
  case Collective::Allreduce:
    return ncclAllReduce(in_place ? buffers.receive : buffers.send, buffers.receive, floats, ncclFloat,
                         ncclSum, comm, stream);
  case Collective::Allgather:
    return ncclAllGather(buffers.send, buffers.receive, block_floats, ncclFloat, comm, stream);
  case Collective::ReduceScatter:
    return ncclReduceScatter(buffers.send, buffers.receive, block_floats, ncclFloat, ncclSum, comm, stream);
  case Collective::Bcast:
    return ncclBroadcast(buffers.receive, buffers.receive, floats, ncclFloat, 0, comm, stream);
  case Collective::Reduce:
    return ncclReduce(buffers.send, buffers.receive, floats, ncclFloat, ncclSum, 0, comm, stream);
  }
  return ncclInvalidArgument;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The sizes of one collective: 8 B, 1 KiB, 8 KiB, 64 KiB, then 4x steps, each rounded down to a
// whole number of floats per rank.
std::vector<std::size_t> sizes_of(Collective collective, int ranks, std::size_t max_bytes) {
  const std::size_t unit = per_rank_blocks(collective) ? sizeof(float) * std::size_t(ranks) : sizeof(float);
  std::vector<std::size_t> sizes;
  for (std::size_t size = 8; size <= max_bytes; size = size == 8 ? 1024 : size * (size < 65536 ? 8 : 4)) {
    const std::size_t whole = std::max(unit, size / unit * unit);
    if (sizes.empty() || sizes.back() != whole)
      sizes.push_back(whole);
  }
  return sizes;
}

} // namespace

int main(int argc, char** argv) {
  const auto [rank, size, devices] = join_gpu_job(&argc, &argv);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  const std::size_t max_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (std::size_t{1} << 30);
  bool in_place = false;
  std::vector<Named> chosen;
  for (int i = 3; i < argc; ++i) {
    const std::string word = argv[i];
    const auto found = std::find_if(std::begin(kCollectives), std::end(kCollectives),
                                    [&](const Named& named) { return word == named.name; });
    if (word == "in-place") {
      in_place = true;
    } else if (found != std::end(kCollectives)) {
      chosen.push_back(*found);
    } else {
      if (rank == 0)
        std::fprintf(stderr,
                     "runtime_collectives: unknown collective %s (allreduce, allgather, "
                     "reduce_scatter, bcast, reduce)\n",
                     argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (iterations < 1 || max_bytes < 8) {
    if (rank == 0)
      std::fprintf(stderr, "runtime_collectives: ITERATIONS must be positive and MAX_BYTES at least 8\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (chosen.empty())
    chosen.assign(std::begin(kCollectives), std::end(kCollectives));
  CUDA_CHECK(cudaSetDevice(rank % devices));

  const bool with_nccl = size <= devices;
  ncclUniqueId id{};
  if (rank == 0 && with_nccl)
    ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t nccl = nullptr;
  if (with_nccl && ncclCommInitRank(&nccl, size, id, rank) != ncclSuccess)
    MPI_Abort(MPI_COMM_WORLD, 3);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  Buffers buffers;
  CUDA_CHECK(cudaMalloc(&buffers.send, max_bytes));
  CUDA_CHECK(cudaMalloc(&buffers.receive, max_bytes));
  CUDA_CHECK(cudaMemset(buffers.send, 0, max_bytes));
  CUDA_CHECK(cudaMemset(buffers.receive, 0, max_bytes));
  for (const Named& named : chosen) {
    const Collective collective = named.collective;
    const bool allreduce_in_place = in_place && collective == Collective::Allreduce;
    if (rank == 0) {
      std::printf("%s%s, %d ranks\n", named.name, allreduce_in_place ? " (in place)" : "", size);
      std::printf("%12s %12s %12s %12s %10s %10s %10s %10s %10s\n", "bytes", "runtime_us", "baseline_us",
                  "nccl_us", "rt_busbw", "base_busbw", "nccl_busbw", "rt/nccl", "rt/base");
    }
    for (const std::size_t bytes : sizes_of(collective, size, max_bytes)) {
      const std::size_t block = per_rank_blocks(collective) ? bytes / std::size_t(size) : bytes;
      std::vector<double> runtime, baseline, nccl_times;
      for (int i = 0; i < 2 * (iterations + 2); ++i) { // two warm-up pairs
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        call_mpi(collective, bytes, block, buffers, allreduce_in_place);
        const double took = slowest_rank(MPI_Wtime() - start);
        if (i >= 4)
          (i % 2 == 0 ? runtime : baseline).push_back(took);
      }
      for (int i = 0; with_nccl && i < iterations + 2; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        if (call_nccl(collective, bytes, block, buffers, allreduce_in_place, nccl, stream) != ncclSuccess)
          MPI_Abort(MPI_COMM_WORLD, 3);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const double took = slowest_rank(MPI_Wtime() - start);
        if (i >= 2)
          nccl_times.push_back(took);
      }
      const double r = median(runtime), b = median(baseline);
      const double n = with_nccl ? median(nccl_times) : std::nan("");
      const double factor = bus_factor(collective, size);
      const auto busbw = [&](double seconds) { return double(bytes) * factor / seconds / 1e9; };
      if (rank == 0)
        std::printf("%12zu %12.1f %12.1f %12.1f %10.1f %10.1f %10.1f %10.2f %10.2f\n", bytes, r * 1e6,
                    b * 1e6, n * 1e6, busbw(r), busbw(b), busbw(n), n / r, b / r);
    }
  }
  if (with_nccl)
    ncclCommDestroy(nccl);
  MPI_Finalize();
  return 0;
}
