// A long mixed run for the GPU runtime, then its leak check: CALLS calls on device buffers chosen at
// random, every result checked:
//   - MPI_Allreduce: int32 (sum, min, max, bxor), int64 (sum, band), double (sum), float (max);
//     1 element to MAX_BYTES, unaligned, in place or not;
//   - MPI_Send/MPI_Recv and MPI_Isend/MPI_Irecv/MPI_Waitall exchanges between rank pairs (0-1,
//     2-3, ...): 1 byte to MAX_BYTES, each side on the device or the host, unaligned.
// Buffers are now reused (one of a few kept allocations), now freshly allocated and freed after
// the call, so the runtime meets both reused and recycled addresses.
// After MPI_Finalize, GPU memory in use on this rank's GPU must be back to its level before the
// first call (within 64 MiB of driver bookkeeping): the runtime frees its scratch buffers and pools
// at MPI_Finalize. MPI is gone by then, so the ranks meet through files in SYNC_DIR, and none exits
// before all have measured (an exited rank's memory is freed with it). Run with
// CUDA_MODULE_LOADING=EAGER, or the first launch of each kernel loads its module after the start
// level is taken. LEAK_MIB > 0 makes rank 0 keep that much allocated past MPI_Finalize, which the
// check must report (the tests' proof that it can fail).
// Data are a hash of (seed, call, rank, index); the seed is fresh each run.
// Each rank prints "rank R: allreduce A device_sends S device_receives V host_rendezvous_receives H
// failures F" (H: host buffers receiving 64 KiB or more from a device buffer, which the runtime
// receives too), rank 0 "gpu_memory: start X MiB before_finalize Y MiB after_finalize Z MiB" and
// "runtime_stress: ok" when every result matched and the memory came back.
// Usage: runtime_stress CALLS SYNC_DIR [MAX_BYTES] [LEAK_MIB]. Rank r uses GPU r modulo the GPU count.
#include "gpu_job.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kRendezvousMinBytes = 64 << 10; // runtime/point_to_point/rendezvous_protocol.hpp
constexpr std::size_t kLeakToleranceBytes = std::size_t{64} << 20;
constexpr int kKeptBuffers = 4;

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Values of 20 bits: sums of up to 16 ranks stay exact in float and double.
std::uint32_t value(std::uint64_t seed, long call, int rank, std::size_t index) {
  return static_cast<std::uint32_t>(mix(seed ^ mix(call * 1000003ull + rank) ^ index * 0x9e3779b9ull) &
                                    0xfffff);
}

std::size_t used_gpu_memory() {
  std::size_t free = 0;
  std::size_t total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return total - free;
}

// A size drawn evenly in log scale from 1 to `most`.
std::size_t log_uniform(std::uint64_t h, std::size_t most) {
  const double exponent = static_cast<double>(h % 1000000) / 1e6 * std::log2(static_cast<double>(most));
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::exp2(exponent)));
}

struct Stress {
  int rank = 0;
  int size = 1;
  std::uint64_t seed = 0;
  std::size_t max_bytes = 8 << 20;
  std::vector<void*> kept; // device buffers of max_bytes + 64, reused across calls
  long allreduce = 0;
  long device_sends = 0;
  long device_receives = 0;
  long host_rendezvous_receives = 0;
  long failures = 0;

  // A device buffer for one call: a kept one other than `taken`, or a fresh one the caller frees
  // (`fresh`).
  void* device_buffer(std::uint64_t h, bool* fresh, const void* taken = nullptr) {
    *fresh = h % 2 == 0;
    if (!*fresh) {
      const std::size_t pick = (h >> 8) % kept.size();
      return kept[pick] != taken ? kept[pick] : kept[(pick + 1) % kept.size()];
    }
    void* buffer = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer, max_bytes + 64));
    return buffer;
  }

  template <typename T> void allreduce_call(long call, std::uint64_t h, MPI_Datatype type, MPI_Op op) {
    const std::size_t count = log_uniform(h, max_bytes / sizeof(T));
    const std::size_t offset = (h >> 24) % 4;
    const bool in_place = (h >> 28) % 2 == 1;
    std::vector<T> mine(count);
    std::vector<T> expected(count);
    for (std::size_t i = 0; i < count; ++i) {
      mine[i] = static_cast<T>(value(seed, call, rank, i));
      T reduced = static_cast<T>(value(seed, call, 0, i));
      for (int r = 1; r < size; ++r) {
        const T v = static_cast<T>(value(seed, call, r, i));
        if (op == MPI_SUM) {
          reduced = reduced + v;
        } else if (op == MPI_MIN) {
          reduced = std::min(reduced, v);
        } else if (op == MPI_MAX) {
          reduced = std::max(reduced, v);
        } else if constexpr (std::is_integral_v<T>) {
          reduced = op == MPI_BXOR ? T(reduced ^ v) : T(reduced & v);
        }
      }
      expected[i] = reduced;
    }
    bool fresh_in = false;
    bool fresh_out = false;
    T* out = static_cast<T*>(device_buffer(h >> 32, &fresh_out)) + offset;
    T* in = in_place ? nullptr : static_cast<T*>(device_buffer(h >> 40, &fresh_in, out - offset)) + offset;
    CUDA_CHECK(cudaMemcpy(in_place ? out : in, mine.data(), count * sizeof(T), cudaMemcpyHostToDevice));
    const int rc =
        MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, static_cast<int>(count), type, op, MPI_COMM_WORLD);
    std::vector<T> got(count);
    CUDA_CHECK(cudaMemcpy(got.data(), out, count * sizeof(T), cudaMemcpyDeviceToHost));
    failures += rc != MPI_SUCCESS || std::memcmp(got.data(), expected.data(), count * sizeof(T)) != 0;
    if (fresh_out) {
      CUDA_CHECK(cudaFree(out - offset));
    }
    if (fresh_in) {
      CUDA_CHECK(cudaFree(in - offset));
    }
    ++allreduce;
  }

  void run_allreduce(long call, std::uint64_t h) {
    switch ((h >> 4) % 8) {
    case 0:
      return allreduce_call<std::int32_t>(call, h, MPI_INT, MPI_SUM);
    case 1:
      return allreduce_call<std::int32_t>(call, h, MPI_INT, MPI_MIN);
    case 2:
      return allreduce_call<std::int32_t>(call, h, MPI_INT, MPI_MAX);
    case 3:
      return allreduce_call<std::int32_t>(call, h, MPI_INT, MPI_BXOR);
    case 4:
      return allreduce_call<std::int64_t>(call, h, MPI_INT64_T, MPI_SUM);
    case 5:
      return allreduce_call<std::int64_t>(call, h, MPI_INT64_T, MPI_BAND);
    case 6:
      return allreduce_call<double>(call, h, MPI_DOUBLE, MPI_SUM);
    default:
      return allreduce_call<float>(call, h, MPI_FLOAT, MPI_MAX);
    }
  }

  // Where one rank's side of an exchange lives; every rank can work out its partner's.
  struct Side {
    bool device;
    std::size_t offset;
  };
  Side side_of(long call, int of_rank, int role) const {
    const std::uint64_t h = mix(seed + call * 31 + of_rank * 7 + role);
    return {h % 4 != 0, (h >> 8) % 16};
  }

  // One message each way between this rank and rank ^ 1, blocking or not.
  void run_exchange(long call, std::uint64_t h) {
    const int partner = rank ^ 1;
    if (partner >= size) {
      return;
    }
    const std::size_t bytes = log_uniform(h >> 4, max_bytes);
    const Side send_side = side_of(call, rank, 0);
    const Side receive_side = side_of(call, rank, 1);
    const bool partner_sends_from_device = side_of(call, partner, 0).device;
    std::vector<unsigned char> message(bytes);
    for (std::size_t i = 0; i < bytes; ++i) {
      message[i] = static_cast<unsigned char>(value(seed, call, rank, i));
    }
    bool fresh_send = false;
    bool fresh_receive = false;
    std::vector<unsigned char> host_send(send_side.device ? 0 : bytes + 16);
    std::vector<unsigned char> host_receive(receive_side.device ? 0 : bytes + 16);
    auto* send_base = send_side.device ? static_cast<unsigned char*>(device_buffer(h >> 32, &fresh_send))
                                       : host_send.data();
    auto* receive_base = receive_side.device
                             ? static_cast<unsigned char*>(device_buffer(h >> 40, &fresh_receive, send_base))
                             : host_receive.data();
    unsigned char* send = send_base + send_side.offset;
    unsigned char* receive = receive_base + receive_side.offset;
    CUDA_CHECK(cudaMemcpy(send, message.data(), bytes, cudaMemcpyDefault));
    const int count = static_cast<int>(bytes);
    const int tag = static_cast<int>(call % 30000);
    int rc = MPI_SUCCESS;
    if ((h >> 2) % 2 == 0) {
      if (rank % 2 == 0) {
        rc |= MPI_Send(send, count, MPI_BYTE, partner, tag, MPI_COMM_WORLD);
        rc |= MPI_Recv(receive, count, MPI_BYTE, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        rc |= MPI_Recv(receive, count, MPI_BYTE, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        rc |= MPI_Send(send, count, MPI_BYTE, partner, tag, MPI_COMM_WORLD);
      }
    } else {
      MPI_Request requests[2];
      rc |= MPI_Irecv(receive, count, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &requests[0]);
      rc |= MPI_Isend(send, count, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &requests[1]);
      rc |= MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    }
    std::vector<unsigned char> got(bytes);
    CUDA_CHECK(cudaMemcpy(got.data(), receive, bytes, cudaMemcpyDefault));
    for (std::size_t i = 0; i < bytes && rc == MPI_SUCCESS; ++i) {
      rc = got[i] == static_cast<unsigned char>(value(seed, call, partner, i)) ? MPI_SUCCESS : MPI_ERR_OTHER;
    }
    failures += rc != MPI_SUCCESS;
    device_sends += send_side.device;
    device_receives += receive_side.device;
    host_rendezvous_receives +=
        !receive_side.device && partner_sends_from_device && bytes >= kRendezvousMinBytes;
    if (fresh_send) {
      CUDA_CHECK(cudaFree(send_base));
    }
    if (fresh_receive) {
      CUDA_CHECK(cudaFree(receive_base));
    }
  }
};

// Every rank creates SYNC_DIR/PHASE.RANK, then waits until all have (two minutes at most).
bool file_barrier(const std::filesystem::path& dir, const std::string& phase, int rank, int size) {
  std::ofstream(dir / (phase + "." + std::to_string(rank))).put('\n');
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  for (int r = 0; r < size; ++r) {
    while (!std::filesystem::exists(dir / (phase + "." + std::to_string(r)))) {
      if (std::chrono::steady_clock::now() > deadline) {
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  return true;
}

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Stress stress;
  MPI_Comm_rank(MPI_COMM_WORLD, &stress.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &stress.size);
  if (argc < 3) {
    if (stress.rank == 0) {
      std::fprintf(stderr, "usage: runtime_stress CALLS SYNC_DIR [MAX_BYTES] [LEAK_MIB]\n");
    }
    MPI_Finalize();
    return 2;
  }
  const long calls = std::atol(argv[1]);
  const std::filesystem::path sync_dir = argv[2];
  stress.max_bytes = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : stress.max_bytes;
  const std::size_t leak_bytes = (argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 0) << 20;
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  CUDA_CHECK(cudaSetDevice(stress.rank % devices));
  // The context and the driver's first-copy state exist before the start level is taken.
  void* warm = nullptr;
  CUDA_CHECK(cudaMalloc(&warm, 64));
  CUDA_CHECK(cudaMemset(warm, 0, 64));
  CUDA_CHECK(cudaFree(warm));
  stress.seed = static_cast<std::uint64_t>(std::time(nullptr)) * 2654435761u;
  MPI_Bcast(&stress.seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::size_t start_level = used_gpu_memory();
  MPI_Barrier(MPI_COMM_WORLD);

  void* leaked = nullptr;
  if (leak_bytes > 0 && stress.rank == 0) {
    CUDA_CHECK(cudaMalloc(&leaked, leak_bytes));
  }
  stress.kept.resize(kKeptBuffers);
  for (void*& buffer : stress.kept) {
    CUDA_CHECK(cudaMalloc(&buffer, stress.max_bytes + 64));
  }
  for (long call = 0; call < calls; ++call) {
    const std::uint64_t h = mix(stress.seed + static_cast<std::uint64_t>(call) * 0x100000001b3ull);
    if (h % 2 == 0) {
      stress.run_allreduce(call, h >> 1);
    } else {
      stress.run_exchange(call, h >> 1);
    }
  }
  for (void* buffer : stress.kept) {
    CUDA_CHECK(cudaFree(buffer));
  }
  std::printf("rank %d: allreduce %ld device_sends %ld device_receives %ld host_rendezvous_receives %ld "
              "failures %ld\n",
              stress.rank, stress.allreduce, stress.device_sends, stress.device_receives,
              stress.host_rendezvous_receives, stress.failures);
  long failures = 0;
  MPI_Reduce(&stress.failures, &failures, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::size_t before_finalize = used_gpu_memory();
  MPI_Finalize();

  const bool met = file_barrier(sync_dir, "finalized", stress.rank, stress.size);
  const std::size_t after_finalize = used_gpu_memory();
  const bool all_measured = file_barrier(sync_dir, "measured", stress.rank, stress.size);
  if (stress.rank != 0) {
    return 0;
  }
  std::printf("gpu_memory: start %.1f MiB before_finalize %.1f MiB after_finalize %.1f MiB\n",
              mib(start_level), mib(before_finalize), mib(after_finalize));
  const bool released = after_finalize <= start_level + kLeakToleranceBytes;
  if (!released) {
    std::printf(
        "GPU memory not released: %.1f MiB more in use after MPI_Finalize than before the first call\n",
        mib(after_finalize - start_level));
  }
  const bool ok = failures == 0 && released && met && all_measured;
  std::printf("runtime_stress: %s (%ld calls, %ld failures)\n", ok ? "ok" : "FAILED", calls, failures);
  (void)leaked; // kept allocated on purpose (LEAK_MIB)
  return ok ? 0 : 1;
}
