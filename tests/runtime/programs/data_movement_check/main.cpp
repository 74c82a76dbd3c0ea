// data_movement_check's driver (checker.hpp says what it checks and prints).
#include "checker.hpp"

#include <cstdlib>

namespace data_movement_check {
namespace {

constexpr Type kInt{MPI_INT, "MPI_INT", 4};
constexpr Type kFloat{MPI_FLOAT, "MPI_FLOAT", 4};
constexpr Type kDouble{MPI_DOUBLE, "MPI_DOUBLE", 8};
constexpr Type kByte{MPI_BYTE, "MPI_BYTE", 1};

// Everything, on one communicator; `full` adds every type and the largest counts.
void check_everything(Checker& check, std::size_t largest, bool full) {
  const std::size_t counts[] = {1, 3, 17, 1001, 65537, largest};
  for (const Type& type : kCopyTypes) {
    check.allgather(type, full ? 17 : 5, false);
    if (full) {
      check.allgather(type, 3, true);
      check.alltoall(type, 9);
      check.gather(type, 7, check.size() - 1, false);
      check.scatter(type, 7, 0, true);
    }
  }
  for (const std::size_t count : counts) {
    if (!full && count == largest) {
      continue;
    }
    check.allgather(kInt, count, false);
    check.allgather(kByte, count, true);
    check.alltoall(kFloat, count);
    check.gather(kDouble, count, 0, false);
    check.scatter(kByte, count, check.size() - 1, false);
    check.reduce_scatter<float>(MPI_FLOAT, Op::Sum, count, true, false);
    check.reduce_scatter<std::int32_t>(MPI_INT, Op::Max, count, false, false);
  }
  for (int root = 0; root < check.size(); ++root) {
    for (const bool in_place : {false, true}) {
      check.gather(kInt, 4099, root, in_place);
      check.scatter(kDouble, 1001, root, in_place);
    }
  }
  every_reduction(check, full ? 33 : 5, true);
  every_reduction(check, full ? 33 : 5, false);
  // The same buffers again and again (cached mappings), after calls that freed and allocated them.
  check.allgather(kInt, 4099, false, Checker::Placement::Device, 5);
  check.alltoall(kDouble, 513, false, 5);
  // What the runtime must hand to the baseline, on every rank alike.
  check.allgather(kInt, 1001, false, Checker::Placement::Host);
  check.allgather(kInt, 1001, false, Checker::Placement::MixedHost);
  check.allgather(kInt, 0, false);
  check.non_contiguous_gather(257);
  check.alltoall(kInt, 100, true);
  check.reduce_scatter<double>(MPI_DOUBLE, Op::Sum, 129, true, true);
}

} // namespace
} // namespace data_movement_check

int main(int argc, char** argv) {
  using namespace data_movement_check;
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); // a failing call is reported, not fatal
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    if (rank == 0) {
      std::printf("data_movement_check: skipped (no GPU)\n");
    }
    MPI_Finalize();
    return 0;
  }
  CUDA_CHECK(cudaSetDevice(rank % devices));
  const std::size_t largest = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t{1} << 20) + 3;
  std::uint64_t seed = static_cast<std::uint64_t>(std::time(nullptr)) * 2654435761u;
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  long eligible = 0;
  long baseline_only = 0;
  long failures = 0;
  {
    Checker world(MPI_COMM_WORLD, seed, &eligible, &baseline_only, &failures);
    check_everything(world, largest, true);
  }
  // Sub-communicators: halves by parity, and the world reversed (rank r is size-1-r there).
  MPI_Comm halves = MPI_COMM_NULL;
  MPI_Comm reversed = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &halves);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  for (MPI_Comm comm : {halves, reversed}) {
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    Checker sub(comm, seed + 1, &eligible, &baseline_only, &failures);
    check_everything(sub, largest, false);
  }
  MPI_Comm_free(&halves);
  MPI_Comm_free(&reversed);
  std::printf("rank %d: runtime_eligible %ld baseline_only %ld failures %ld\n", rank, eligible, baseline_only,
              failures);
  std::fflush(stdout);
  long all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0) {
    std::printf("data_movement_check: ok\n");
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
