// runtime_fuzz: the GPU collective runtime's differential fuzzer. A seeded random sequence of MPI
// calls (reductions with every predefined type and op, data movement, point-to-point in every
// completion style) on buffers in random allocation patterns (fresh cudaMalloc/cudaFree, sub-
// buffers of one allocation at varying offsets, cudaMallocAsync pool memory, managed, pinned and
// pageable host memory), over MPI_COMM_WORLD, a duplicate, a split and a reordered communicator.
// Every result is compared with the host reference on every rank, bitwise (the data are small
// integers, exact in floating types too). With COMMLENS_FUZZ_LOG=DIR each rank writes the mpi_calls
// row every call must produce (DIR/rank-N.tsv) for check_rows.py.
//
// Usage: runtime_fuzz SEED STEPS [MAX_LOG2_COUNT]. Prints one line per mismatch and a summary:
// "runtime_fuzz: seed S steps N calls C mismatches M (op=count ...)". Exit status 1 on a mismatch.
#include "fuzz_context.hpp"

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

namespace {

fuzz::Communicator describe(MPI_Comm comm, const char* name) {
  fuzz::Communicator c{comm, name, 0, 0, {}};
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.size);
  MPI_Group group;
  MPI_Group world;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> ranks(static_cast<std::size_t>(c.size));
  c.world_ranks.resize(ranks.size());
  for (int i = 0; i < c.size; ++i) {
    ranks[i] = i;
  }
  MPI_Group_translate_ranks(group, c.size, ranks.data(), world, c.world_ranks.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  return c;
}

// MPI_COMM_WORLD, a duplicate, halves by parity, and the ranks in reverse order.
std::vector<fuzz::Communicator> communicators(int rank, int size, fuzz::RowLog& log) {
  MPI_Comm duplicate;
  MPI_Comm halves;
  MPI_Comm reversed;
  MPI_Comm_dup(MPI_COMM_WORLD, &duplicate);
  log.call("MPI_Comm_dup");
  MPI_Comm_split(MPI_COMM_WORLD, size > 1 ? rank % 2 : 0, rank, &halves);
  log.call("MPI_Comm_split");
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  log.call("MPI_Comm_split");
  return {describe(MPI_COMM_WORLD, "world"), describe(duplicate, "dup"), describe(halves, "parity split"),
          describe(reversed, "reversed")};
}

std::FILE* open_log(int rank) {
  const char* directory = std::getenv("COMMLENS_FUZZ_LOG");
  if (directory == nullptr || *directory == '\0') {
    return nullptr;
  }
  const std::string path = std::string(directory) + "/rank-" + std::to_string(rank) + ".tsv";
  return std::fopen(path.c_str(), "w");
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  int devices = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) {
      std::printf("usage: runtime_fuzz SEED STEPS [MAX_LOG2_COUNT]\n");
    }
    MPI_Finalize();
    return 2;
  }
  // Without a GPU every buffer is host memory: what the wrappers record and pass on is still checked.
  const bool gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  if (gpu) {
    cudaSetDevice(rank % devices);
  } else if (rank == 0) {
    std::printf("runtime_fuzz: no GPU, host memory only\n");
  }
  const std::uint64_t seed = std::strtoull(argv[1], nullptr, 10);
  const long steps = std::strtol(argv[2], nullptr, 10);
  std::FILE* log_file = open_log(rank);
  fuzz::RowLog log(log_file);
  fuzz::BufferFactory buffers(gpu ? std::size_t{64} << 20 : 0,
                              seed * 1000003 + static_cast<std::uint64_t>(rank));
  fuzz::Context context{
      .world_rank = rank, .seed = seed, .sequence = std::mt19937_64(seed), .buffers = buffers, .log = log};
  context.max_log2_count = argc > 3 ? std::atoi(argv[3]) : 20;
  context.comms = communicators(rank, size, log);
  const auto& operations = fuzz::operations();
  for (context.step = 0; context.step < steps; ++context.step) {
    const fuzz::NamedOperation& operation = operations[context.draw(operations.size())];
    const fuzz::Communicator& comm = context.comms[context.draw(context.comms.size())];
    operation.run(context, comm);
    ++context.calls[operation.name];
  }
  long mismatches = 0;
  MPI_Reduce(&context.mismatches, &mismatches, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  log.call("MPI_Reduce", sizeof(long), rank == 0 ? sizeof(long) : 0, 1, "MPI_LONG", -1);
  if (rank == 0) {
    std::string per_operation;
    for (const auto& [name, count] : context.calls) {
      per_operation += " " + name + "=" + std::to_string(count);
    }
    std::printf("runtime_fuzz: seed %llu steps %ld ranks %d mismatches %ld (%s )\n",
                static_cast<unsigned long long>(seed), steps, size, mismatches, per_operation.c_str());
  }
  for (std::size_t i = 1; i < context.comms.size(); ++i) {
    MPI_Comm_free(&context.comms[i].comm);
    log.call("MPI_Comm_free");
  }
  if (log_file != nullptr) {
    std::fclose(log_file);
  }
  MPI_Finalize();
  return mismatches == 0 ? 0 : 1;
}
