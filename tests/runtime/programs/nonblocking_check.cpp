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
#include "nonblocking_forms.hpp"

#include <cstring>
#include <ctime>
#include <string>

namespace {

using namespace commlens::nonblocking_forms;
using commlens::reference::mix;
using commlens::reference::mpi_op;

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

} // namespace

int main(int argc, char** argv) {
  const GpuJob job = join_gpu_job(&argc, &argv);
  CUDA_CHECK(cudaSetDevice(job.rank % job.devices));
  const int rounds = parse_count(argc, argv, 1, 40);
  const std::uint64_t seed = agreed_seed(argc, argv);

  Communicators communicators(job);
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
      call.op = draw_op(*call.type, random);
      call.count = draw_count(random, round);
      call.in_place = random() % 3 == 0;
      call.communicator = communicators.draw(random);
      call.seed = mix(seed ^ (static_cast<std::uint64_t>(round) << 20) ^ i);
      call.memory = draw_memory(*call.communicator, random);
      prepare(call);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    for (std::size_t i = 0; i < calls.size(); ++i) {
      post(calls[i]);
      ++nonblocking_calls;
      if (random() % 4 == 0) { // a blocking call on world between the posts
        Call blocking{
            &types[4],     Op::Sum, 4099, false, &communicators.world, mix(seed ^ round ^ (i << 8) ^ 0xb10c),
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
    const Completion form = complete_round(calls, round, random);
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
  return finish("nonblocking_check", failures, communicators, job.rank);
}
