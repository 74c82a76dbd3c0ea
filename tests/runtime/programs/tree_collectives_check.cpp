// MPI_Bcast and MPI_Reduce on device buffers, checked byte for byte against a host reference:
// every predefined integer, floating-point and C_BOOL type with every op MPI defines on it, every
// root, MPI_IN_PLACE at the root of a reduce, odd counts from 1 to 2^22 + 3, on MPI_COMM_WORLD
// and on two sub-communicators (even/odd ranks, and every rank in reverse order), for three
// rounds: buffers are reused for every call of a round and freed and allocated again between
// rounds. Inputs are small integers (exact in floating point, so any order of combination gives
// the same bits) hashed from (seed, rank, call, index), so every rank computes every reference.
// Besides, on MPI_COMM_WORLD in the first round, four calls the runtime must hand to the baseline:
// a bcast of a host buffer, a bcast of a non-contiguous datatype, a reduce with a user-defined op
// and a reduce of MPI_2INT with MPI_MINLOC.
// Usage: tree_collectives_check [ROUNDS]
// Each rank prints "rank R: calls C failures F", C counting every bcast and reduce it made (those
// above, and the seed's bcast and the failure count's reduce, both on host buffers);
// rank 0 prints "tree_collectives_check: ok" when every result matched. Rank r uses GPU r modulo
// the GPU count.
#include "gpu_job.hpp"
#include "reduction_reference.hpp"

#include <cstdint>
#include <cstring>
#include <ctime>
#include <vector>

namespace {

using commlens::reference::combine;
using commlens::reference::mix;
using commlens::reference::mpi_op;
using commlens::reference::Op;

constexpr Op kArithmetic[] = {Op::Sum, Op::Prod, Op::Min, Op::Max};
constexpr Op kLogical[] = {Op::Land, Op::Lor, Op::Lxor};
constexpr Op kBitwise[] = {Op::Band, Op::Bor, Op::Bxor};

constexpr long kFallbackCalls = 4;

struct Checker {
  int world_rank;
  std::uint64_t seed;
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  long call = 0;
  long calls = 1; // bcast and reduce calls this rank made: the seed's bcast first
  long failures = 0;
  bool boolean = false; // the values are C_BOOL's 0 and 1 (stored as bytes)
  // This round's device buffers, reused by every call of the round.
  void* send = nullptr;
  void* recv = nullptr;
  std::size_t capacity = 0;

  void use(MPI_Comm c) {
    comm = c;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
  }

  template <typename T> T value(int owner, std::size_t index, Op op) const {
    const std::uint64_t h = mix(seed ^ mix(static_cast<std::uint64_t>(call) * 131 + owner) ^ mix(index));
    if (boolean)
      return T(h % 2);
    if (op == Op::Band || op == Op::Bor || op == Op::Bxor)
      return T(h);
    if (op == Op::Prod) // small factors: an exact product in every type of 8 ranks
      return std::is_signed_v<T> ? T(int(h % 5) - 2) : T(1 + h % 2);
    return std::is_signed_v<T> ? T(int(h % 7) - 3) : T(h % 7);
  }

  void report(const char* what, int rc, std::size_t count, int root, const char* detail) {
    if (failures++ < 10) {
      std::fprintf(stderr, "world rank %d call %ld: %s count %zu root %d comm size %d: %s (rc %d)\n",
                   world_rank, call, what, count, root, size, detail, rc);
    }
  }

  void compare(const char* what, const void* got, const void* want, std::size_t bytes, std::size_t count,
               int root) {
    if (std::memcmp(got, want, bytes) != 0) {
      report(what, MPI_SUCCESS, count, root, "result differs from the host reference");
    }
  }

  template <typename T> void reduce(MPI_Datatype type, Op op, std::size_t count, int root, bool in_place) {
    const std::size_t bytes = count * sizeof(T);
    std::vector<T> mine(count), want(count), got(count);
    for (std::size_t i = 0; i < count; ++i) {
      mine[i] = value<T>(rank, i, op);
      want[i] = value<T>(0, i, op);
      for (int r = 1; r < size; ++r)
        want[i] = combine(op, want[i], value<T>(r, i, op));
    }
    const bool place = in_place && rank == root;
    CUDA_CHECK(cudaMemcpy(place ? recv : send, mine.data(), bytes, cudaMemcpyHostToDevice));
    if (!place)
      CUDA_CHECK(cudaMemset(recv, 0xA5, bytes));
    const int rc =
        MPI_Reduce(place ? MPI_IN_PLACE : send, recv, static_cast<int>(count), type, mpi_op(op), root, comm);
    if (rc != MPI_SUCCESS)
      report("MPI_Reduce", rc, count, root, "failed");
    if (rank == root) {
      CUDA_CHECK(cudaMemcpy(got.data(), recv, bytes, cudaMemcpyDeviceToHost));
      compare("MPI_Reduce", got.data(), want.data(), bytes, count, root);
    }
    ++call;
    ++calls;
  }

  void bcast(std::size_t bytes, MPI_Datatype type, int type_bytes, int root) {
    std::vector<unsigned char> want(bytes), got(bytes);
    for (std::size_t i = 0; i < bytes; ++i)
      want[i] = static_cast<unsigned char>(mix(seed ^ mix(static_cast<std::uint64_t>(call)) ^ i));
    if (rank == root)
      CUDA_CHECK(cudaMemcpy(send, want.data(), bytes, cudaMemcpyHostToDevice));
    else
      CUDA_CHECK(cudaMemset(send, 0xA5, bytes));
    const int rc = MPI_Bcast(send, static_cast<int>(bytes / type_bytes), type, root, comm);
    if (rc != MPI_SUCCESS)
      report("MPI_Bcast", rc, bytes, root, "failed");
    CUDA_CHECK(cudaMemcpy(got.data(), send, bytes, cudaMemcpyDeviceToHost));
    compare("MPI_Bcast", got.data(), want.data(), bytes, bytes / type_bytes, root);
    ++call;
    ++calls;
  }

  template <typename T, std::size_t N>
  void reduce_every_op(MPI_Datatype type, const Op (&ops)[N], std::size_t count) {
    for (const Op op : ops) {
      const int root = static_cast<int>(call % size);
      reduce<T>(type, op, count, root, call % 3 == 0);
    }
  }

  // Every predefined type the runtime reduces, each with the ops MPI defines on it.
  void every_type_and_op(std::size_t count) {
    reduce_every_op<std::int8_t>(MPI_INT8_T, kArithmetic, count);
    reduce_every_op<std::int8_t>(MPI_SIGNED_CHAR, kBitwise, count);
    reduce_every_op<std::uint8_t>(MPI_UINT8_T, kLogical, count);
    reduce_every_op<std::uint8_t>(MPI_UNSIGNED_CHAR, kBitwise, count);
    reduce_every_op<std::int16_t>(MPI_SHORT, kArithmetic, count);
    reduce_every_op<std::uint16_t>(MPI_UINT16_T, kBitwise, count);
    reduce_every_op<int>(MPI_INT, kArithmetic, count);
    reduce_every_op<int>(MPI_INT, kLogical, count);
    reduce_every_op<unsigned>(MPI_UNSIGNED, kBitwise, count);
    reduce_every_op<long>(MPI_LONG, kArithmetic, count);
    reduce_every_op<unsigned long>(MPI_UNSIGNED_LONG, kBitwise, count);
    reduce_every_op<std::int64_t>(MPI_INT64_T, kLogical, count);
    reduce_every_op<std::uint64_t>(MPI_UINT64_T, kArithmetic, count);
    reduce_every_op<float>(MPI_FLOAT, kArithmetic, count);
    reduce_every_op<double>(MPI_DOUBLE, kArithmetic, count);
    boolean = true;
    reduce_every_op<std::uint8_t>(MPI_C_BOOL, kLogical, count);
    boolean = false;
  }

  void round_on(MPI_Comm c, bool large) {
    use(c);
    for (const std::size_t count : {std::size_t{1}, std::size_t{3}, std::size_t{4097}})
      every_type_and_op(count);
    for (int root = 0; root < size; ++root) {
      for (const std::size_t bytes : {std::size_t{1}, std::size_t{7}, std::size_t{65537}})
        bcast(bytes, MPI_BYTE, 1, root);
      bcast(4 * 1001, MPI_INT, 4, root);
      bcast(8 * 4099, MPI_DOUBLE, 8, root);
    }
    if (!large)
      return;
    for (const std::size_t count :
         {std::size_t{65537}, (std::size_t{1} << 20) + 1, (std::size_t{1} << 22) + 3}) {
      for (const int root : {0, size - 1}) {
        reduce<int>(MPI_INT, Op::Sum, count, root, false);
        reduce<double>(MPI_DOUBLE, Op::Max, count, root, root == 0);
        reduce<std::uint8_t>(MPI_UINT8_T, Op::Bxor, count, root, false);
        bcast(count * 4, MPI_FLOAT, 4, root);
      }
    }
  }

  // Calls the runtime must hand to the baseline (results checked too).
  void fallbacks() {
    use(MPI_COMM_WORLD);
    std::vector<int> host(5, rank == 0 ? 42 : 0);
    MPI_Bcast(host.data(), 5, MPI_INT, 0, comm);
    if (host[4] != 42)
      report("MPI_Bcast", MPI_SUCCESS, 5, 0, "host buffer: wrong result");
    MPI_Datatype every_other;
    MPI_Type_vector(64, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    std::vector<int> strided(128, rank == 0 ? 7 : 0);
    CUDA_CHECK(cudaMemcpy(send, strided.data(), 128 * sizeof(int), cudaMemcpyHostToDevice));
    MPI_Bcast(send, 1, every_other, 0, comm);
    CUDA_CHECK(cudaMemcpy(strided.data(), send, 128 * sizeof(int), cudaMemcpyDeviceToHost));
    if (strided[126] != 7 || (rank != 0 && strided[127] != 0))
      report("MPI_Bcast", MPI_SUCCESS, 1, 0, "vector datatype: wrong result");
    MPI_Type_free(&every_other);
    MPI_Op user;
    MPI_Op_create(
        [](void* in, void* inout, int* length, MPI_Datatype*) {
          for (int i = 0; i < *length; ++i)
            static_cast<int*>(inout)[i] += static_cast<int*>(in)[i];
        },
        1, &user);
    const int one = 1;
    CUDA_CHECK(cudaMemcpy(send, &one, sizeof one, cudaMemcpyHostToDevice));
    MPI_Reduce(send, recv, 1, MPI_INT, user, 0, comm);
    int total = 0;
    CUDA_CHECK(cudaMemcpy(&total, recv, sizeof total, cudaMemcpyDeviceToHost));
    if (rank == 0 && total != size)
      report("MPI_Reduce", MPI_SUCCESS, 1, 0, "user-defined op: wrong result");
    MPI_Op_free(&user);
    const int pair[2] = {100 - rank, rank};
    CUDA_CHECK(cudaMemcpy(send, pair, sizeof pair, cudaMemcpyHostToDevice));
    MPI_Reduce(send, recv, 1, MPI_2INT, MPI_MINLOC, 0, comm);
    int lowest[2] = {};
    CUDA_CHECK(cudaMemcpy(lowest, recv, sizeof lowest, cudaMemcpyDeviceToHost));
    if (rank == 0 && (lowest[0] != 100 - (size - 1) || lowest[1] != size - 1))
      report("MPI_Reduce", MPI_SUCCESS, 1, 0, "MPI_MINLOC on MPI_2INT: wrong result");
    calls += kFallbackCalls;
  }
};

} // namespace

int main(int argc, char** argv) {
  const GpuJob job = join_gpu_job(&argc, &argv);
  CUDA_CHECK(cudaSetDevice(job.rank % job.devices));
  const int rounds = parse_count(argc, argv, 1, 3);
  std::uint64_t seed = static_cast<std::uint64_t>(std::time(nullptr));
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  Checker checker{job.rank, seed};
  MPI_Comm halves, reversed;
  MPI_Comm_split(MPI_COMM_WORLD, job.rank % 2, job.rank, &halves);
  MPI_Comm_split(MPI_COMM_WORLD, 0, job.size - job.rank, &reversed);
  checker.capacity = ((std::size_t{1} << 22) + 3) * sizeof(double);
  for (int round = 0; round < rounds; ++round) {
    // Fresh allocations each round: the runtime must notice reused addresses are new buffers.
    CUDA_CHECK(cudaMalloc(&checker.send, checker.capacity));
    CUDA_CHECK(cudaMalloc(&checker.recv, checker.capacity));
    if (round == 0)
      checker.fallbacks();
    checker.round_on(MPI_COMM_WORLD, true);
    checker.round_on(halves, round == 0);
    checker.round_on(reversed, round == 0);
    CUDA_CHECK(cudaFree(checker.send));
    CUDA_CHECK(cudaFree(checker.recv));
  }
  MPI_Comm_free(&halves);
  MPI_Comm_free(&reversed);
  std::printf("rank %d: calls %ld failures %ld\n", job.rank, checker.calls + 1, checker.failures);
  long failures = 0;
  MPI_Reduce(&checker.failures, &failures, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (job.rank == 0 && failures == 0)
    std::printf("tree_collectives_check: ok\n");
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
