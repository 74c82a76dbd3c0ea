// Overlap of nonblocking collectives with computation on device buffers. For each collective named
// (iallreduce, ibcast, iallgather, ireduce_scatter) and each size, an iteration posts N calls on N
// buffers of float sums (MPI_Iallreduce in place; MPI_Ibcast, call i from root i modulo the ranks;
// MPI_Iallgather and MPI_Ireduce_scatter_block, BYTES the whole buffer as in nccl-tests: a block
// of BYTES / ranks, at least one element), launches one compute kernel of a fixed length on a
// stream of its own, then waits for all of them (MPI_Waitall) and the kernel. Also timed alone:
// the N calls posted and waited for without the kernel, and the kernel alone. Large sizes run
// fewer calls (an iteration's calls move at most 256 MiB) and fewer iterations (ITERATIONS while
// the calls move at most 4 MiB, fewer in proportion above, at least 3), so 256 MiB stays short.
// Every call's inputs are refilled before each iteration, and the last iteration's outputs are
// checked against the values each rank sent: a mismatch anywhere exits non-zero, so a wrong
// result is never timed. Times are medians of the slowest rank.
// bench/runtime_nonblocking.sh runs it with the runtime's nonblocking collectives and with the
// host-staged baseline and prints the ratios.
// Usage: runtime_nonblocking COLLECTIVE[,COLLECTIVE...] ITERATIONS CALLS COMPUTE_US BYTES...
// Prints per collective and size: "runtime_nonblocking: collective NAME bytes B calls N
// iterations I compute_ms K comm_ms C overlapped_ms T".
#include "gpu_job.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr std::size_t kMaxIterationBytes = std::size_t{256} << 20;
constexpr std::size_t kFullIterationsBytes = std::size_t{4} << 20;
constexpr int kMinIterations = 3;

const std::vector<std::string> kCollectives = {"iallreduce", "ibcast", "iallgather", "ireduce_scatter"};

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// What `rank` sends as element `index` of call `call`: small integers, so that float sums over up
// to hundreds of ranks are exact, different on every rank, element and call.
__host__ __device__ float sent_value(int rank, int call, std::size_t index) {
  return static_cast<float>(rank + 1 + static_cast<int>((index + call) % 61));
}

__global__ void fill_sent(float* data, std::size_t count, int rank, int call) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    data[i] = sent_value(rank, call, i);
  }
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// One call's device buffers: `send` is null where the call works in place (allreduce, bcast).
struct CallBuffers {
  float* send = nullptr;
  float* recv = nullptr;
};

// The element counts of one collective at one size, and how to post it and what it must yield.
class Collective {
public:
  Collective(std::string name, std::size_t bytes, const GpuJob& job) : name_(std::move(name)), job_(job) {
    const std::size_t elements = std::max<std::size_t>(1, bytes / sizeof(float));
    block_ = std::max<std::size_t>(1, elements / job.size);
    if (name_ == "iallreduce" || name_ == "ibcast") {
      recv_count_ = elements;
    } else if (name_ == "iallgather") {
      send_count_ = block_;
      recv_count_ = block_ * job.size;
    } else {
      send_count_ = block_ * job.size;
      recv_count_ = block_;
    }
  }

  CallBuffers allocate() const {
    CallBuffers buffers;
    if (send_count_ > 0) {
      CUDA_CHECK(cudaMalloc(&buffers.send, send_count_ * sizeof(float)));
    }
    CUDA_CHECK(cudaMalloc(&buffers.recv, recv_count_ * sizeof(float)));
    return buffers;
  }

  // The call's inputs as sent_value; an output that is not an input is all NaN (0xff bytes), so an
  // element the collective never wrote fails the check.
  void refill(const CallBuffers& buffers, int call) const {
    if (buffers.send != nullptr) {
      fill_sent<<<256, 256>>>(buffers.send, send_count_, job_.rank, call);
      CUDA_CHECK(cudaMemset(buffers.recv, 0xff, recv_count_ * sizeof(float)));
    } else {
      fill_sent<<<256, 256>>>(buffers.recv, recv_count_, job_.rank, call);
    }
    CUDA_CHECK(cudaGetLastError());
  }

  void post(const CallBuffers& buffers, int call, MPI_Request* request) const {
    const int block = static_cast<int>(block_);
    if (name_ == "iallreduce") {
      MPI_Iallreduce(MPI_IN_PLACE, buffers.recv, static_cast<int>(recv_count_), MPI_FLOAT, MPI_SUM,
                     MPI_COMM_WORLD, request);
    } else if (name_ == "ibcast") {
      MPI_Ibcast(buffers.recv, static_cast<int>(recv_count_), MPI_FLOAT, call % job_.size, MPI_COMM_WORLD,
                 request);
    } else if (name_ == "iallgather") {
      MPI_Iallgather(buffers.send, block, MPI_FLOAT, buffers.recv, block, MPI_FLOAT, MPI_COMM_WORLD, request);
    } else {
      MPI_Ireduce_scatter_block(buffers.send, buffers.recv, block, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                request);
    }
  }

  // This rank's output element `index` of call `call`, from what every rank sent.
  float expected(int call, std::size_t index) const {
    const auto sum_over_ranks = [&](std::size_t sent_index) {
      float sum = 0;
      for (int rank = 0; rank < job_.size; ++rank) {
        sum += sent_value(rank, call, sent_index);
      }
      return sum;
    };
    if (name_ == "iallreduce") {
      return sum_over_ranks(index);
    }
    if (name_ == "ibcast") {
      return sent_value(call % job_.size, call, index);
    }
    if (name_ == "iallgather") {
      return sent_value(static_cast<int>(index / block_), call, index % block_);
    }
    return sum_over_ranks(job_.rank * block_ + index);
  }

  // The number of this rank's output elements that differ from what the call must yield; the first
  // one is reported.
  std::size_t mismatches(const CallBuffers& buffers, int call) const {
    std::vector<float> received(recv_count_);
    CUDA_CHECK(
        cudaMemcpy(received.data(), buffers.recv, recv_count_ * sizeof(float), cudaMemcpyDeviceToHost));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < recv_count_; ++i) {
      const float want = expected(call, i);
      if (!(received[i] == want) && wrong++ == 0) {
        std::fprintf(stderr, "runtime_nonblocking: %s rank %d call %d element %zu: got %g, expected %g\n",
                     name_.c_str(), job_.rank, call, i, received[i], want);
      }
    }
    return wrong;
  }

  const std::string& name() const { return name_; }
  std::size_t bytes_per_call() const { return std::max(send_count_, recv_count_) * sizeof(float); }

private:
  std::string name_;
  GpuJob job_;
  std::size_t block_ = 1;
  std::size_t send_count_ = 0;
  std::size_t recv_count_ = 0;
};

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  std::stringstream stream(list);
  for (std::string name; std::getline(stream, name, ',');) {
    if (std::find(kCollectives.begin(), kCollectives.end(), name) == kCollectives.end()) {
      std::fprintf(stderr, "runtime_nonblocking: unknown collective '%s'\n", name.c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    names.push_back(name);
  }
  return names;
}

struct Settings {
  int iterations = 0;
  int calls = 0;
  long long compute_cycles = 0;
  cudaStream_t compute = nullptr;
};

// Times one collective at one size and checks its last iteration; false on a wrong result.
bool measure(const Collective& collective, std::size_t bytes, const Settings& settings, const GpuJob& job) {
  const std::size_t call_bytes = collective.bytes_per_call();
  const int calls =
      static_cast<int>(std::clamp<std::size_t>(kMaxIterationBytes / call_bytes, 1, settings.calls));
  const std::size_t iteration_bytes = call_bytes * calls;
  const int iterations = static_cast<int>(
      std::clamp<std::size_t>(settings.iterations * kFullIterationsBytes / iteration_bytes, kMinIterations,
                              std::max(settings.iterations, kMinIterations)));
  std::vector<CallBuffers> buffers(calls);
  for (CallBuffers& call : buffers) {
    call = collective.allocate();
  }
  std::vector<MPI_Request> requests(calls);
  // One iteration: the calls (with_comm), the kernel (with_compute), or both overlapped.
  auto iteration = [&](bool with_comm, bool with_compute) {
    for (int i = 0; with_comm && i < calls; ++i) {
      collective.refill(buffers[i], i);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; with_comm && i < calls; ++i) {
      collective.post(buffers[i], i, &requests[i]);
    }
    if (with_compute) {
      spin<<<1, 1, 0, settings.compute>>>(settings.compute_cycles);
    }
    if (with_comm) {
      MPI_Waitall(calls, requests.data(), MPI_STATUSES_IGNORE);
    }
    CUDA_CHECK(cudaStreamSynchronize(settings.compute));
    return slowest_rank(MPI_Wtime() - start);
  };
  iteration(true, true); // first uses (IPC opens) out of the timings
  std::vector<double> comm, compute_only, overlapped;
  for (int i = 0; i < iterations; ++i) {
    comm.push_back(iteration(true, false));
    compute_only.push_back(iteration(false, true));
    overlapped.push_back(iteration(true, true));
  }
  unsigned long long wrong = 0;
  for (int i = 0; i < calls; ++i) {
    wrong += collective.mismatches(buffers[i], i);
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (job.rank == 0) {
    if (wrong > 0) {
      std::fprintf(stderr, "runtime_nonblocking: %s of %zu bytes: %llu wrong elements over all ranks\n",
                   collective.name().c_str(), bytes, wrong);
    } else {
      std::printf(
          "runtime_nonblocking: collective %s bytes %zu calls %d iterations %d compute_ms %.3f comm_ms "
          "%.3f overlapped_ms %.3f\n",
          collective.name().c_str(), bytes, calls, iterations, median(compute_only) * 1e3, median(comm) * 1e3,
          median(overlapped) * 1e3);
      std::fflush(stdout);
    }
  }
  for (const CallBuffers& call : buffers) {
    CUDA_CHECK(cudaFree(call.send));
    CUDA_CHECK(cudaFree(call.recv));
  }
  return wrong == 0;
}

} // namespace

int main(int argc, char** argv) {
  const GpuJob job = join_gpu_job(&argc, &argv);
  if (argc < 6) {
    if (job.rank == 0) {
      std::fprintf(stderr,
                   "usage: runtime_nonblocking COLLECTIVE[,COLLECTIVE...] ITERATIONS CALLS COMPUTE_US "
                   "BYTES...\n  COLLECTIVE: iallreduce, ibcast, iallgather or ireduce_scatter\n");
    }
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int device = job.rank % job.devices;
  CUDA_CHECK(cudaSetDevice(device));
  const std::vector<std::string> names = split_names(argv[1]);
  Settings settings;
  settings.iterations = std::atoi(argv[2]);
  settings.calls = std::max(1, std::atoi(argv[3]));
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  settings.compute_cycles = static_cast<long long>(std::atof(argv[4]) * clock_khz / 1000.0);
  CUDA_CHECK(cudaStreamCreateWithFlags(&settings.compute, cudaStreamNonBlocking));
  bool all_correct = true;
  for (const std::string& name : names) {
    for (int a = 5; a < argc; ++a) {
      const std::size_t bytes = std::stoull(argv[a]);
      all_correct = measure(Collective(name, bytes, job), bytes, settings, job) && all_correct;
    }
  }
  CUDA_CHECK(cudaStreamDestroy(settings.compute));
  MPI_Finalize();
  return all_correct ? 0 : 1;
}
