// MPI's progress rule for the runtime's nonblocking collectives declined in their jobs: rank 0
// passes a host buffer (so every rank's job declines the runtime's algorithms) and, right after
// posting the call, blocks in MPI_Recv of a message the last rank sends only after its MPI_Wait
// for the same call returned. The other ranks pass device buffers and post late (rank 0 is then
// inside MPI_Recv while its job still waits in the agreement), so nothing but the lane can finish
// the call: a runtime that leaves it to rank 0's next MPI call hangs here (the test's timeout).
// Each round runs MPI_Iallreduce (in place every other round), MPI_Iallgather, MPI_Ireduce_scatter_block,
// MPI_Ireduce_scatter (uneven counts) and MPI_Ibcast (the root cycling through the ranks) this way
// and checks every result bitwise; inputs are small integers hashed from (round, rank, index),
// exact in float too.
// Usage: nonblocking_progress_check ROUNDS [COUNT]
// Rank 0 prints "nonblocking_progress_check: ok" when every result on every rank matched.
// Rank r uses GPU r modulo the GPU count.
#include "gpu_job.hpp"
#include "host_or_device_memory.hpp"
#include "reduction_reference.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <vector>

namespace {

using commlens::reference::mix;

struct Job {
  int rank;
  int size;
};

float input_value(int round, int rank, std::size_t index) {
  return static_cast<float>(
      mix((static_cast<std::uint64_t>(round) << 40) ^ (static_cast<std::uint64_t>(rank) << 32) ^ index) % 8);
}

// A buffer of `count` floats on this rank: host memory on rank 0, device memory elsewhere.
struct Buffer {
  std::size_t count;
  HostOrDeviceMemory memory;
  float* data;

  Buffer(bool on_host, std::size_t n)
      : count(n), memory(std::max<std::size_t>(n, 1) * sizeof(float), on_host),
        data(static_cast<float*>(memory.data())) {}
  void write(const std::vector<float>& values) {
    CUDA_CHECK(cudaMemcpy(data, values.data(), values.size() * sizeof(float), cudaMemcpyDefault));
  }
  std::vector<float> read() const {
    std::vector<float> values(count);
    CUDA_CHECK(cudaMemcpy(values.data(), data, count * sizeof(float), cudaMemcpyDefault));
    return values;
  }
};

// Posts the call (post), then the pattern: rank 0 receives the last rank's message before it
// waits; the last rank sends it once its own wait returned; every rank but 0 posts late.
void run_pattern(const Job& job, const std::function<void(MPI_Request*)>& post) {
  if (job.rank != 0) {
    usleep(100 * 1000); // rank 0 is in MPI_Recv by now, its job waiting for the others' in the agreement
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  MPI_Request request = MPI_REQUEST_NULL;
  post(&request);
  int token = 0;
  const int last = job.size - 1;
  if (job.rank == 0) {
    MPI_Recv(&token, 1, MPI_INT, last, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (job.rank == last) {
      token = 1;
      MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
  }
}

std::vector<float> inputs_of(int round, int rank, std::size_t count) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    values[i] = input_value(round, rank, i);
  }
  return values;
}

// The sum over every rank of element i of the round's inputs, in rank order.
float sum_of(const Job& job, int round, std::size_t index) {
  float sum = input_value(round, 0, index);
  for (int rank = 1; rank < job.size; ++rank) {
    sum += input_value(round, rank, index);
  }
  return sum;
}

int check(const char* what, int round, const std::vector<float>& got, const std::vector<float>& expected) {
  if (std::memcmp(got.data(), expected.data(), expected.size() * sizeof(float)) == 0) {
    return 0;
  }
  std::fprintf(stderr, "round %d: %s mismatch\n", round, what);
  return 1;
}

int iallreduce(const Job& job, int round, std::size_t count) {
  const bool in_place = round % 2 == 1;
  Buffer send(job.rank == 0, count);
  Buffer receive(job.rank == 0, count);
  (in_place ? receive : send).write(inputs_of(round, job.rank, count));
  run_pattern(job, [&](MPI_Request* request) {
    MPI_Iallreduce(in_place ? MPI_IN_PLACE : send.data, receive.data, static_cast<int>(count), MPI_FLOAT,
                   MPI_SUM, MPI_COMM_WORLD, request);
  });
  std::vector<float> expected(count);
  for (std::size_t i = 0; i < count; ++i) {
    expected[i] = sum_of(job, round, i);
  }
  return check("MPI_Iallreduce", round, receive.read(), expected);
}

int iallgather(const Job& job, int round, std::size_t count) {
  Buffer send(job.rank == 0, count);
  Buffer receive(job.rank == 0, count * job.size);
  send.write(inputs_of(round, job.rank, count));
  run_pattern(job, [&](MPI_Request* request) {
    MPI_Iallgather(send.data, static_cast<int>(count), MPI_FLOAT, receive.data, static_cast<int>(count),
                   MPI_FLOAT, MPI_COMM_WORLD, request);
  });
  std::vector<float> expected;
  for (int rank = 0; rank < job.size; ++rank) {
    const std::vector<float> block = inputs_of(round, rank, count);
    expected.insert(expected.end(), block.begin(), block.end());
  }
  return check("MPI_Iallgather", round, receive.read(), expected);
}

// Reduce-scatter with `counts` (MPI_Ireduce_scatter), or equal blocks (MPI_Ireduce_scatter_block).
int ireduce_scatter(const Job& job, int round, const std::vector<int>& counts, bool block) {
  const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  const std::size_t first = std::accumulate(counts.begin(), counts.begin() + job.rank, std::size_t{0});
  Buffer send(job.rank == 0, total);
  Buffer receive(job.rank == 0, static_cast<std::size_t>(counts[job.rank]));
  send.write(inputs_of(round, job.rank, total));
  run_pattern(job, [&](MPI_Request* request) {
    if (block) {
      MPI_Ireduce_scatter_block(send.data, receive.data, counts[0], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                request);
    } else {
      MPI_Ireduce_scatter(send.data, receive.data, counts.data(), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                          request);
    }
  });
  std::vector<float> expected(static_cast<std::size_t>(counts[job.rank]));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    expected[i] = sum_of(job, round, first + i);
  }
  return check(block ? "MPI_Ireduce_scatter_block" : "MPI_Ireduce_scatter", round, receive.read(), expected);
}

// The root's inputs land in every rank's buffer; the others' buffers start as -1.
int ibcast(const Job& job, int round, std::size_t count) {
  const int root = round % job.size;
  Buffer buffer(job.rank == 0, count);
  buffer.write(job.rank == root ? inputs_of(round, root, count) : std::vector<float>(count, -1.0f));
  run_pattern(job, [&](MPI_Request* request) {
    MPI_Ibcast(buffer.data, static_cast<int>(count), MPI_FLOAT, root, MPI_COMM_WORLD, request);
  });
  return check("MPI_Ibcast", round, buffer.read(), inputs_of(round, root, count));
}

} // namespace

int main(int argc, char** argv) {
  const GpuJob gpu = join_gpu_job(&argc, &argv);
  CUDA_CHECK(cudaSetDevice(gpu.rank % gpu.devices));
  const int rounds = parse_count(argc, argv, 1, 4);
  const auto count = static_cast<std::size_t>(parse_count(argc, argv, 2, 100003));
  const Job job{gpu.rank, gpu.size};
  std::vector<int> uneven(job.size);
  for (int rank = 0; rank < job.size; ++rank) {
    uneven[rank] = static_cast<int>(count / static_cast<std::size_t>(job.size)) + rank;
  }
  int failures = 0;
  for (int round = 0; round < rounds; ++round) {
    failures += iallreduce(job, round, count);
    failures += iallgather(job, round, count / static_cast<std::size_t>(job.size) + 1);
    failures +=
        ireduce_scatter(job, round, std::vector<int>(job.size, static_cast<int>(count) / job.size + 3), true);
    failures += ireduce_scatter(job, round, uneven, false);
    failures += ibcast(job, round, count);
  }
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (job.rank == 0 && all_failures == 0) {
    std::printf("nonblocking_progress_check: ok\n");
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
