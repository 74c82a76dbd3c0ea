// MPI_Iallgather, MPI_Ireduce_scatter_block, MPI_Ireduce_scatter and MPI_Ibcast on device buffers
// under the runtime's nonblocking collectives, checked bitwise against a host reference (what
// nonblocking_check does for MPI_Iallreduce): every integer and floating type, every op MPI allows
// for the reductions, counts odd and up to 2^22 + 3 (a bcast's count; the whole input of a
// reduce-scatter; every rank's blocks together for an allgather), uneven reduce-scatter counts with
// zeros, every root in turn, in place where MPI has it, on MPI_COMM_WORLD, a duplicate, a parity
// split and a reversed communicator, one to six calls of drawn collectives outstanding at once and
// completed by each wait and test form in shuffled order, the same collective's blocking call on
// MPI_COMM_WORLD now and then between the posts, host buffers now and then on one rank or all (the
// ranks then agree on the baseline), and fresh buffers every round. Inputs are small integers
// hashed from (seed, call, communicator rank, index), so every rank computes the reference itself.
// Usage: nonblocking_collectives_check ROUNDS [SEED]
// Rank 0 prints the seed (drawn from the time when not given); each rank prints "rank R:
// MPI_Iallgather N MPI_Ireduce_scatter_block N MPI_Ireduce_scatter N MPI_Ibcast N blocking_calls B
// failures F"; rank 0 prints "nonblocking_collectives_check: ok" when every result on every rank
// matched. Rank r uses GPU r modulo the GPU count.
#include "nonblocking_forms.hpp"

#include <array>
#include <cstring>
#include <ctime>
#include <string>

namespace {

using namespace commlens::nonblocking_forms;
using commlens::reference::mix;
using commlens::reference::mpi_op;

enum class Kind { Iallgather, IreduceScatterBlock, IreduceScatter, Ibcast, kCount };
constexpr const char* kKindNames[] = {"MPI_Iallgather", "MPI_Ireduce_scatter_block", "MPI_Ireduce_scatter",
                                      "MPI_Ibcast"};

// One call: its arguments, its buffers, and what it must produce.
struct Call {
  Kind kind;
  const ElementType* type;
  Op op;
  bool in_place; // allgather and the reduce-scatters
  const Communicator* communicator;
  std::uint64_t seed;
  Memory memory;
  int root = 0;            // bcast
  std::vector<int> counts; // per communicator rank: its block (allgather, reduce-scatters); bcast: all
  void* send = nullptr;    // device or host; null in place and for a bcast
  void* recv = nullptr;
  MPI_Request request = MPI_REQUEST_NULL;

  int me() const { return communicator->rank; }
  std::size_t total() const {
    std::size_t sum = 0;
    for (const int count : counts) {
      sum += static_cast<std::size_t>(count);
    }
    return sum;
  }
  std::size_t offset(int rank) const { // of a rank's block in the whole
    std::size_t sum = 0;
    for (int q = 0; q < rank; ++q) {
      sum += static_cast<std::size_t>(counts[q]);
    }
    return sum;
  }
  // Elements of the receive buffer, and of the send buffer (0: none).
  std::size_t recv_count() const {
    switch (kind) {
    case Kind::Iallgather:
      return total();
    case Kind::Ibcast:
      return counts[0];
    default:
      return in_place ? total() : static_cast<std::size_t>(counts[me()]);
    }
  }
  std::size_t send_count() const {
    return kind == Kind::Ibcast || in_place ? 0 : kind == Kind::Iallgather ? counts[me()] : total();
  }
  // Elements of the result at the start of (reduce-scatters) or through (the rest) recv.
  std::size_t result_count() const {
    return kind == Kind::IreduceScatter || kind == Kind::IreduceScatterBlock ? counts[me()] : recv_count();
  }
};

std::uint64_t input_seed(const Call& call, int comm_rank) {
  return mix(call.seed ^ (static_cast<std::uint64_t>(comm_rank) << 40));
}

// Fills `count` elements of rank q's input from element `first` on (inputs are hashed per index).
void fill_input(const Call& call, int q, std::size_t first, std::size_t count, void* data) {
  call.type->fill(data, count, input_seed(call, q) + first);
}

// Every rank's block counts: one block for an allgather and a reduce_scatter_block (about n over
// the ranks, odd), uneven ones with zeros for a reduce_scatter, n for a bcast. Drawn from the call's
// seed, not the shared generator, so that communicators of different sizes keep it in step.
std::vector<int> block_counts(const Call& call, std::size_t n) {
  const int size = call.communicator->size;
  const int even_share = static_cast<int>(std::max<std::size_t>(n / static_cast<std::size_t>(size), 1) | 1);
  switch (call.kind) {
  case Kind::Ibcast:
    return {static_cast<int>(n)};
  case Kind::IreduceScatter: {
    std::vector<int> counts(size);
    for (int q = 0; q < size; ++q) {
      const std::uint64_t draw = mix(call.seed ^ (0x5ca77e4ULL + static_cast<std::uint64_t>(q)));
      counts[q] = draw % 4 == 0 ? 0 : std::max(1, even_share + static_cast<int>(draw % 7) - 3);
    }
    return counts;
  }
  default:
    return std::vector<int>(size, even_share);
  }
}

// Buffers holding this rank's input; whatever the call writes poisoned first.
void prepare(Call& call) {
  call.send = nullptr;
  call.request = MPI_REQUEST_NULL;
  const std::size_t size = call.type->size;
  std::vector<unsigned char> data(std::max(call.recv_count(), call.send_count()) * size);
  std::fill(data.begin(), data.end(), 0xa5);
  call.recv = allocate(call.memory, call.recv_count() * size);
  const int me = call.me();
  switch (call.kind) {
  case Kind::Ibcast:
    if (me == call.root) {
      fill_input(call, me, 0, call.recv_count(), data.data());
    }
    break;
  case Kind::Iallgather:
    if (call.in_place) {
      fill_input(call, me, 0, call.counts[me], data.data() + call.offset(me) * size);
    }
    break;
  default:
    if (call.in_place) {
      fill_input(call, me, 0, call.total(), data.data());
    }
    break;
  }
  copy(call.recv, data.data(), call.recv_count() * size);
  if (call.send_count() > 0) {
    call.send = allocate(call.memory, call.send_count() * size);
    fill_input(call, me, 0, call.send_count(), data.data()); // own block, or the whole input
    copy(call.send, data.data(), call.send_count() * size);
  }
}

// What this rank's result must be.
std::vector<unsigned char> expected(const Call& call) {
  const std::size_t size = call.type->size;
  const int me = call.me();
  std::vector<unsigned char> result(call.result_count() * size);
  switch (call.kind) {
  case Kind::Ibcast:
    fill_input(call, call.root, 0, call.result_count(), result.data());
    break;
  case Kind::Iallgather:
    for (int q = 0; q < call.communicator->size; ++q) {
      fill_input(call, q, 0, call.counts[q], result.data() + call.offset(q) * size);
    }
    break;
  default: {
    const std::size_t first = call.offset(me);
    std::vector<unsigned char> input(result.size());
    fill_input(call, 0, first, call.result_count(), result.data());
    for (int q = 1; q < call.communicator->size; ++q) {
      fill_input(call, q, first, call.result_count(), input.data());
      call.type->reduce(call.op, input.data(), result.data(), call.result_count());
    }
    break;
  }
  }
  return result;
}

bool matches(const Call& call) {
  const std::vector<unsigned char> want = expected(call);
  std::vector<unsigned char> got(want.size());
  copy(got.data(), call.recv, got.size());
  return std::memcmp(got.data(), want.data(), want.size()) == 0;
}

// The call posted (request set) or, with blocking, its blocking collective run.
void run(Call& call, bool blocking) {
  const MPI_Comm comm = call.communicator->comm;
  const MPI_Datatype type = call.type->datatype;
  const void* send = call.in_place ? MPI_IN_PLACE : call.send;
  const int me = call.me();
  MPI_Request* request = &call.request;
  switch (call.kind) {
  case Kind::Iallgather:
    blocking ? MPI_Allgather(send, call.counts[me], type, call.recv, call.counts[me], type, comm)
             : MPI_Iallgather(send, call.counts[me], type, call.recv, call.counts[me], type, comm, request);
    break;
  case Kind::IreduceScatterBlock:
    blocking
        ? MPI_Reduce_scatter_block(send, call.recv, call.counts[me], type, mpi_op(call.op), comm)
        : MPI_Ireduce_scatter_block(send, call.recv, call.counts[me], type, mpi_op(call.op), comm, request);
    break;
  case Kind::IreduceScatter:
    blocking ? MPI_Reduce_scatter(send, call.recv, call.counts.data(), type, mpi_op(call.op), comm)
             : MPI_Ireduce_scatter(send, call.recv, call.counts.data(), type, mpi_op(call.op), comm, request);
    break;
  default:
    blocking ? MPI_Bcast(call.recv, call.counts[0], type, call.root, comm)
             : MPI_Ibcast(call.recv, call.counts[0], type, call.root, comm, request);
    break;
  }
}

void release(Call& call) {
  release(call.memory, call.send);
  release(call.memory, call.recv);
}

} // namespace

int main(int argc, char** argv) {
  const GpuJob job = join_gpu_job(&argc, &argv);
  CUDA_CHECK(cudaSetDevice(job.rank % job.devices));
  const int rounds = parse_count(argc, argv, 1, 40);
  const std::uint64_t seed = agreed_seed(argc, argv);
  if (job.rank == 0) {
    std::printf("nonblocking_collectives_check: seed %llu\n", static_cast<unsigned long long>(seed));
  }

  Communicators communicators(job);
  const std::vector<ElementType> types = element_types();
  std::mt19937_64 random(seed); // equal on every rank: every rank draws the same calls
  std::array<long long, static_cast<int>(Kind::kCount)> posted{};
  long long blocking_calls = 0;
  long long failures = 0;
  int bcasts = 0; // roots go round each communicator in turn
  auto report = [&](const Call& call, int round, const char* what) {
    ++failures;
    std::fprintf(
        stderr, "rank %d: round %d %s mismatch: %s type size %zu op %d count %zu in_place %d root %d %s %s\n",
        job.rank, round, what, kKindNames[static_cast<int>(call.kind)], call.type->size,
        static_cast<int>(call.op), call.total(), call.in_place, call.root, call.communicator->name,
        call.memory == Memory::Host ? "host" : "device");
  };
  for (int round = 0; round < rounds; ++round) {
    std::vector<Call> calls(1 + random() % 6);
    for (std::size_t i = 0; i < calls.size(); ++i) {
      Call& call = calls[i];
      const std::uint64_t call_seed = mix(seed ^ (static_cast<std::uint64_t>(round) << 20) ^ i);
      // Now and then the previous call again (as a training step repeats its calls), new data: in
      // ab mode its signature's second call is the baseline's turn.
      if (i > 0 && random() % 2 == 0) {
        call = calls[i - 1];
      } else {
        call.kind = static_cast<Kind>(random() % static_cast<int>(Kind::kCount));
        call.type = &types[random() % types.size()];
        call.op = draw_op(*call.type, random);
        const std::size_t n = draw_count(random, round);
        call.in_place = random() % 3 == 0 && call.kind != Kind::Ibcast;
        call.communicator = communicators.draw(random);
        call.root = call.kind == Kind::Ibcast ? bcasts++ % call.communicator->size : 0;
        call.seed = call_seed;
        call.counts = block_counts(call, n);
      }
      call.seed = call_seed;
      call.memory = draw_memory(*call.communicator, random);
      prepare(call);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    for (std::size_t i = 0; i < calls.size(); ++i) {
      run(calls[i], false);
      ++posted[static_cast<int>(calls[i].kind)];
      if (random() % 4 == 0) { // the same collective, blocking, on world between the posts
        Call blocking = calls[i];
        blocking.communicator = &communicators.world;
        blocking.memory = Memory::Device;
        blocking.seed = mix(seed ^ round ^ (i << 8) ^ 0xb10c);
        blocking.root = round % job.size;
        blocking.counts = block_counts(blocking, 4099);
        prepare(blocking);
        run(blocking, true);
        ++blocking_calls;
        if (!matches(blocking)) {
          report(blocking, round, "blocking");
        }
        release(blocking);
      }
    }
    complete_round(calls, round, random);
    for (Call& call : calls) {
      if (!matches(call)) {
        report(call, round, "nonblocking");
      }
      release(call);
    }
  }
  std::printf("rank %d:", job.rank);
  for (int kind = 0; kind < static_cast<int>(Kind::kCount); ++kind) {
    std::printf(" %s %lld", kKindNames[kind], posted[kind]);
  }
  std::printf(" blocking_calls %lld failures %lld\n", blocking_calls, failures);
  return finish("nonblocking_collectives_check", failures, communicators, job.rank);
}
