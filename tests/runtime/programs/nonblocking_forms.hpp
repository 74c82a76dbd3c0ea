#pragma once
// What the nonblocking collectives' GPU checks (nonblocking_check, nonblocking_collectives_check)
// share: the element types with their host fill and reduction, the communicators the calls run
// on, device or host buffers, and the completion of outstanding requests by each wait and test form.
#include "gpu_job.hpp"
#include "reduction_reference.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace commlens::nonblocking_forms {

using reference::Op;

// One element type: its MPI name and how to fill and reduce a host array of it.
struct ElementType {
  MPI_Datatype datatype;
  std::size_t size;
  bool floating; // MPI allows only sum, prod, min and max on floating types
  std::function<void(void* data, std::size_t count, std::uint64_t seed)> fill;
  std::function<void(Op op, const void* in, void* inout, std::size_t count)> reduce;
};

template <typename T> ElementType element_type(MPI_Datatype datatype) {
  return {datatype, sizeof(T), std::is_floating_point_v<T>,
          [](void* data, std::size_t count, std::uint64_t seed) {
            auto* values = static_cast<T*>(data);
            for (std::size_t i = 0; i < count; ++i) {
              values[i] = static_cast<T>(reference::mix(seed + i) % 4); // small: exact sums and products
            }
          },
          [](Op op, const void* in, void* inout, std::size_t count) {
            const auto* a = static_cast<const T*>(in);
            auto* b = static_cast<T*>(inout);
            for (std::size_t i = 0; i < count; ++i) {
              b[i] = reference::combine(op, b[i], a[i]);
            }
          }};
}

inline std::vector<ElementType> element_types() {
  return {element_type<signed char>(MPI_SIGNED_CHAR),
          element_type<unsigned char>(MPI_UNSIGNED_CHAR),
          element_type<short>(MPI_SHORT),
          element_type<unsigned short>(MPI_UNSIGNED_SHORT),
          element_type<int>(MPI_INT),
          element_type<unsigned>(MPI_UNSIGNED),
          element_type<long long>(MPI_LONG_LONG),
          element_type<unsigned long long>(MPI_UNSIGNED_LONG_LONG),
          element_type<float>(MPI_FLOAT),
          element_type<double>(MPI_DOUBLE)};
}

// An op MPI allows on `type`, drawn from `random`.
inline Op draw_op(const ElementType& type, std::mt19937_64& random) {
  Op op = Op::Sum;
  do {
    op = reference::kAllOps[random() % std::size(reference::kAllOps)];
  } while (type.floating && !(op == Op::Sum || op == Op::Prod || op == Op::Min || op == Op::Max));
  return op;
}

struct Communicator {
  MPI_Comm comm;
  int rank;
  int size;
  const char* name;
};

// MPI_COMM_WORLD, a duplicate, a parity split and a reversed communicator; free_communicators()
// frees the three made here.
struct Communicators {
  Communicator world{MPI_COMM_WORLD, 0, 0, "world"};
  Communicator duplicate{MPI_COMM_NULL, 0, 0, "duplicate"};
  Communicator parity{MPI_COMM_NULL, 0, 0, "parity"};
  Communicator reversed{MPI_COMM_NULL, 0, 0, "reversed"};

  explicit Communicators(const GpuJob& job) {
    world.rank = job.rank;
    world.size = job.size;
    MPI_Comm_dup(MPI_COMM_WORLD, &duplicate.comm);
    MPI_Comm_split(MPI_COMM_WORLD, job.rank % 2, job.rank, &parity.comm);
    MPI_Comm_split(MPI_COMM_WORLD, 0, job.size - job.rank, &reversed.comm);
    for (Communicator* c : {&duplicate, &parity, &reversed}) {
      MPI_Comm_rank(c->comm, &c->rank);
      MPI_Comm_size(c->comm, &c->size);
    }
  }
  const Communicator* draw(std::mt19937_64& random) const {
    const Communicator* all[] = {&world, &duplicate, &parity, &reversed};
    return all[random() % std::size(all)];
  }
  void free_communicators() {
    for (Communicator* c : {&duplicate, &parity, &reversed}) {
      MPI_Comm_free(&c->comm);
    }
  }
};

enum class Memory { Device, Host };

// Host buffers on every rank now and then, or on the communicator's rank 0 only: the ranks then
// agree on the baseline.
inline Memory draw_memory(const Communicator& communicator, std::mt19937_64& random) {
  const std::uint64_t host_draw = random() % 16;
  return host_draw == 0 || (host_draw == 1 && communicator.rank == 0) ? Memory::Host : Memory::Device;
}

inline void* allocate(Memory memory, std::size_t bytes) {
  void* data = nullptr;
  if (memory == Memory::Device) {
    CUDA_CHECK(cudaMalloc(&data, std::max<std::size_t>(bytes, 1)));
  } else {
    data = std::malloc(std::max<std::size_t>(bytes, 1));
  }
  return data;
}

inline void release(Memory memory, void* data) {
  if (data == nullptr) {
    return;
  }
  if (memory == Memory::Device) {
    CUDA_CHECK(cudaFree(data));
  } else {
    std::free(data);
  }
}

inline void copy(void* destination, const void* source, std::size_t bytes) {
  if (bytes > 0) {
    CUDA_CHECK(cudaMemcpy(destination, source, bytes, cudaMemcpyDefault));
  }
}

enum class Completion { WaitShuffled, Waitall, Waitany, Waitsome, Test, Testall, Testany, Testsome, kCount };

// Completes every request with one wait/test form (shuffled where the form takes one at a time).
inline void complete(std::vector<MPI_Request>& requests, Completion form, std::mt19937_64& random) {
  const int n = static_cast<int>(requests.size());
  auto done = [&] {
    return std::all_of(requests.begin(), requests.end(), [](MPI_Request r) { return r == MPI_REQUEST_NULL; });
  };
  auto shuffled = [&] {
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), random);
    return order;
  };
  std::vector<int> indices(n);
  int index = MPI_UNDEFINED;
  int outcount = 0;
  switch (form) {
  case Completion::WaitShuffled:
    for (int i : shuffled()) {
      MPI_Wait(&requests[i], MPI_STATUS_IGNORE);
    }
    break;
  case Completion::Waitall:
    MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE);
    break;
  case Completion::Waitany:
    while (!done()) {
      MPI_Waitany(n, requests.data(), &index, MPI_STATUS_IGNORE);
    }
    break;
  case Completion::Waitsome:
    while (!done()) {
      MPI_Waitsome(n, requests.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
    }
    break;
  case Completion::Test: {
    const std::vector<int> order = shuffled();
    while (!done()) {
      for (int i : order) {
        int flag = 0;
        MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE);
      }
    }
    break;
  }
  case Completion::Testall:
    for (int flag = 0; flag == 0;) {
      MPI_Testall(n, requests.data(), &flag, MPI_STATUSES_IGNORE);
    }
    break;
  case Completion::Testany:
    while (!done()) {
      int flag = 0;
      MPI_Testany(n, requests.data(), &index, &flag, MPI_STATUS_IGNORE);
    }
    break;
  case Completion::Testsome:
    while (!done()) {
      MPI_Testsome(n, requests.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
    }
    break;
  case Completion::kCount:
    break;
  }
}

// Element counts: odd ones and 2^22 + 3 every ninth round.
// Completes the requests of every call of a round by the round's form (the forms take turns by
// round, the order within a form drawn from `random`); returns that form.
template <typename Call>
Completion complete_round(const std::vector<Call>& calls, int round, std::mt19937_64& random) {
  const auto form = static_cast<Completion>(round % static_cast<int>(Completion::kCount));
  std::vector<MPI_Request> requests;
  for (const Call& call : calls) {
    requests.push_back(call.request);
  }
  complete(requests, form, random);
  return form;
}

// Ends the program: frees the communicators, finalizes MPI, and returns the exit status, 0 when no
// rank counted a failure (rank 0 then prints "PROGRAM: ok").
inline int finish(const char* program, long long failures, Communicators& communicators, int rank) {
  long long all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0) {
    std::printf("%s: ok\n", program);
  }
  communicators.free_communicators();
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}

// The run's seed: argv[2] when given, else the time; rank 0's, so every rank draws the same calls.
inline std::uint64_t agreed_seed(int argc, char** argv) {
  std::uint64_t seed = argc > 2 ? std::stoull(argv[2]) : static_cast<std::uint64_t>(time(nullptr));
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

inline std::size_t draw_count(std::mt19937_64& random, int round) {
  static constexpr std::size_t kCounts[] = {1, 3, 7, 255, 4099, 65537, 262147};
  if (round % 9 == 4) {
    return (std::size_t{1} << 22) + 3;
  }
  return kCounts[random() % std::size(kCounts)];
}

} // namespace commlens::nonblocking_forms
