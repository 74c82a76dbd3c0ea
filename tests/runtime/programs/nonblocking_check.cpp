// MPI_Iallreduce on device buffers under the runtime's nonblocking collectives, checked bitwise
// against a host reference: every predefined op on every integer and floating type MPI allows it
// for, counts odd and up to 2^22 + 3, in place, on MPI_COMM_WORLD, a duplicate, a parity split and a
// reversed communicator, several calls outstanding at once and completed by each wait and test
// call (MPI_Wait in shuffled order, Waitall, Waitany, Waitsome, Test, Testall, Testany, Testsome),
// blocking MPI_Allreduce calls between the posts, host buffers now and then on one rank or all
// (the ranks then agree on the baseline), and fresh buffers every round. Inputs are small integers
// hashed from (seed, call, communicator rank, index), exact in every type, so every rank computes
// the reference itself.
// Usage: nonblocking_check ROUNDS [SEED]
// Each rank prints "rank R: nonblocking_calls N blocking_calls B failures F"; rank 0 prints
// "nonblocking_check: ok" when every result on every rank matched. Rank r uses GPU r modulo the GPU count.
#include "gpu_job.hpp"
#include "reduction_reference.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using commlens::reference::combine;
using commlens::reference::kAllOps;
using commlens::reference::mix;
using commlens::reference::mpi_op;
using commlens::reference::Op;

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
              values[i] = static_cast<T>(mix(seed + i) % 4); // small: exact sums and products
            }
          },
          [](Op op, const void* in, void* inout, std::size_t count) {
            const auto* a = static_cast<const T*>(in);
            auto* b = static_cast<T*>(inout);
            for (std::size_t i = 0; i < count; ++i) {
              b[i] = combine(op, b[i], a[i]);
            }
          }};
}

std::vector<ElementType> element_types() {
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

struct Communicator {
  MPI_Comm comm;
  int rank;
  int size;
  const char* name;
};

enum class Memory { Device, Host };

// One outstanding call: its arguments, its buffers, and what it must produce.
struct Call {
  const ElementType* type;
  Op op;
  std::size_t count;
  bool in_place;
  const Communicator* communicator;
  std::uint64_t seed;
  Memory memory;
  void* send = nullptr; // device or host; null in place
  void* recv = nullptr;
  MPI_Request request = MPI_REQUEST_NULL;
};

std::uint64_t input_seed(const Call& call, int comm_rank) {
  return mix(call.seed ^ (static_cast<std::uint64_t>(comm_rank) << 40));
}

void* allocate(Memory memory, std::size_t bytes) {
  void* data = nullptr;
  if (memory == Memory::Device) {
    CUDA_CHECK(cudaMalloc(&data, std::max<std::size_t>(bytes, 1)));
  } else {
    data = std::malloc(std::max<std::size_t>(bytes, 1));
  }
  return data;
}

void release(Memory memory, void* data) {
  if (data == nullptr) {
    return;
  }
  if (memory == Memory::Device) {
    CUDA_CHECK(cudaFree(data));
  } else {
    std::free(data);
  }
}

void copy(void* destination, const void* source, std::size_t bytes) {
  CUDA_CHECK(cudaMemcpy(destination, source, bytes, cudaMemcpyDefault));
}

// Buffers filled with this rank's input (into recv when in place); the output poisoned otherwise.
void prepare(Call& call) {
  const std::size_t bytes = call.count * call.type->size;
  std::vector<unsigned char> input(bytes);
  call.type->fill(input.data(), call.count, input_seed(call, call.communicator->rank));
  call.recv = allocate(call.memory, bytes);
  if (call.in_place) {
    copy(call.recv, input.data(), bytes);
    return;
  }
  call.send = allocate(call.memory, bytes);
  copy(call.send, input.data(), bytes);
  std::vector<unsigned char> poison(bytes, 0xa5);
  copy(call.recv, poison.data(), bytes);
}

// Whether the output holds the reduction of every communicator rank's input, bitwise.
bool matches(const Call& call) {
  const std::size_t bytes = call.count * call.type->size;
  std::vector<unsigned char> expected(bytes);
  std::vector<unsigned char> input(bytes);
  call.type->fill(expected.data(), call.count, input_seed(call, 0));
  for (int q = 1; q < call.communicator->size; ++q) {
    call.type->fill(input.data(), call.count, input_seed(call, q));
    call.type->reduce(call.op, input.data(), expected.data(), call.count);
  }
  std::vector<unsigned char> got(bytes);
  copy(got.data(), call.recv, bytes);
  return std::memcmp(got.data(), expected.data(), bytes) == 0;
}

void post(Call& call) {
  MPI_Iallreduce(call.in_place ? MPI_IN_PLACE : call.send, call.recv, static_cast<int>(call.count),
                 call.type->datatype, mpi_op(call.op), call.communicator->comm, &call.request);
}

enum class Completion { WaitShuffled, Waitall, Waitany, Waitsome, Test, Testall, Testany, Testsome, kCount };

// Completes every call's request with one wait/test form.
void complete(std::vector<Call>& calls, Completion form, std::mt19937_64& random) {
  std::vector<MPI_Request> requests;
  for (const Call& call : calls) {
    requests.push_back(call.request);
  }
  const int n = static_cast<int>(requests.size());
  auto done = [&] {
    return std::all_of(requests.begin(), requests.end(), [](MPI_Request r) { return r == MPI_REQUEST_NULL; });
  };
  switch (form) {
  case Completion::WaitShuffled: {
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), random);
    for (int i : order) {
      MPI_Wait(&requests[i], MPI_STATUS_IGNORE);
    }
    break;
  }
  case Completion::Waitall:
    MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE);
    break;
  case Completion::Waitany:
    while (!done()) {
      int index = MPI_UNDEFINED;
      MPI_Waitany(n, requests.data(), &index, MPI_STATUS_IGNORE);
    }
    break;
  case Completion::Waitsome:
    while (!done()) {
      std::vector<int> indices(n);
      int outcount = 0;
      MPI_Waitsome(n, requests.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
    }
    break;
  case Completion::Test: {
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), random);
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
      int index = MPI_UNDEFINED;
      int flag = 0;
      MPI_Testany(n, requests.data(), &index, &flag, MPI_STATUS_IGNORE);
    }
    break;
  case Completion::Testsome:
    while (!done()) {
      std::vector<int> indices(n);
      int outcount = 0;
      MPI_Testsome(n, requests.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
    }
    break;
  case Completion::kCount:
    break;
  }
}

std::size_t draw_count(std::mt19937_64& random, int round) {
  static constexpr std::size_t kCounts[] = {1, 3, 7, 255, 4099, 65537, 262147};
  if (round % 9 == 4) {
    return (std::size_t{1} << 22) + 3;
  }
  return kCounts[random() % std::size(kCounts)];
}

} // namespace

int main(int argc, char** argv) {
  const GpuJob job = join_gpu_job(&argc, &argv);
  CUDA_CHECK(cudaSetDevice(job.rank % job.devices));
  const int rounds = parse_count(argc, argv, 1, 40);
  std::uint64_t seed = argc > 2 ? std::stoull(argv[2]) : static_cast<std::uint64_t>(time(nullptr));
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);

  Communicator world{MPI_COMM_WORLD, job.rank, job.size, "world"};
  Communicator duplicate{MPI_COMM_NULL, 0, 0, "duplicate"};
  Communicator parity{MPI_COMM_NULL, 0, 0, "parity"};
  Communicator reversed{MPI_COMM_NULL, 0, 0, "reversed"};
  MPI_Comm_dup(MPI_COMM_WORLD, &duplicate.comm);
  MPI_Comm_split(MPI_COMM_WORLD, job.rank % 2, job.rank, &parity.comm);
  MPI_Comm_split(MPI_COMM_WORLD, 0, job.size - job.rank, &reversed.comm);
  for (Communicator* c : {&duplicate, &parity, &reversed}) {
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
  }
  const Communicator* communicators[] = {&world, &duplicate, &parity, &reversed};
  const std::vector<ElementType> types = element_types();

  std::mt19937_64 random(seed); // equal on every rank: every rank draws the same calls
  long long nonblocking_calls = 0;
  long long blocking_calls = 0;
  long long failures = 0;
  for (int round = 0; round < rounds; ++round) {
    std::vector<Call> calls(1 + random() % 6);
    for (std::size_t i = 0; i < calls.size(); ++i) {
      Call& call = calls[i];
      call.type = &types[random() % types.size()];
      do {
        call.op = kAllOps[random() % std::size(kAllOps)];
      } while (call.type->floating &&
               !(call.op == Op::Sum || call.op == Op::Prod || call.op == Op::Min || call.op == Op::Max));
      call.count = draw_count(random, round);
      call.in_place = random() % 3 == 0;
      call.communicator = communicators[random() % std::size(communicators)];
      call.seed = mix(seed ^ (static_cast<std::uint64_t>(round) << 20) ^ i);
      // Host buffers on every rank, or on one rank only: the ranks agree on the baseline.
      const std::uint64_t host_draw = random() % 16;
      call.memory =
          host_draw == 0 || (host_draw == 1 && call.communicator->rank == 0) ? Memory::Host : Memory::Device;
      prepare(call);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    for (std::size_t i = 0; i < calls.size(); ++i) {
      post(calls[i]);
      ++nonblocking_calls;
      if (random() % 4 == 0) { // a blocking call on world between the posts
        Call blocking{&types[4],     Op::Sum, 4099, false, &world, mix(seed ^ round ^ (i << 8) ^ 0xb10c),
                      Memory::Device};
        prepare(blocking);
        MPI_Allreduce(blocking.send, blocking.recv, static_cast<int>(blocking.count), blocking.type->datatype,
                      MPI_SUM, MPI_COMM_WORLD);
        ++blocking_calls;
        failures += matches(blocking) ? 0 : 1;
        release(blocking.memory, blocking.send);
        release(blocking.memory, blocking.recv);
      }
    }
    const auto form = static_cast<Completion>(round % static_cast<int>(Completion::kCount));
    complete(calls, form, random);
    for (Call& call : calls) {
      if (!matches(call)) {
        ++failures;
        std::fprintf(
            stderr, "rank %d: round %d mismatch: type size %zu op %d count %zu in_place %d %s %s form %d\n",
            job.rank, round, call.type->size, static_cast<int>(call.op), call.count, call.in_place,
            call.communicator->name, call.memory == Memory::Host ? "host" : "device", static_cast<int>(form));
      }
      release(call.memory, call.send);
      release(call.memory, call.recv);
    }
  }
  std::printf("rank %d: nonblocking_calls %lld blocking_calls %lld failures %lld\n", job.rank,
              nonblocking_calls, blocking_calls, failures);
  long long all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (job.rank == 0 && all_failures == 0) {
    std::printf("nonblocking_check: ok\n");
  }
  for (Communicator* c : {&duplicate, &parity, &reversed}) {
    MPI_Comm_free(&c->comm);
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
