// The data-movement sweep `commlens tune` profiles (sweep_plan.hpp): allgather, gather, scatter,
// alltoall, reduce_scatter_block and reduce_scatter of float blocks, CALLS calls per block size
// each. Sizes are the block one rank sends one peer (reduce_scatter: each rank's block), so the
// buffers hold RANKS blocks.
#include "sweep_plan.hpp"

#include <vector>

int main(int argc, char** argv) {
  const SweepPlan plan = start_sweep(&argc, &argv);
  const int ranks = plan.job.size;
  const std::size_t largest = (plan.sizes.empty() ? 4 : plan.sizes.back()) * static_cast<std::size_t>(ranks);
  void* send = device_buffer(largest);
  void* recv = device_buffer(largest);
  const MPI_Comm world = MPI_COMM_WORLD;
  const auto count = [](std::size_t bytes) { return static_cast<int>(std::max<std::size_t>(bytes / 4, 1)); };
  sweep_sizes(plan, [&](std::size_t b) {
    MPI_Allgather(send, count(b), MPI_FLOAT, recv, count(b), MPI_FLOAT, world);
  });
  sweep_sizes(plan, [&](std::size_t b) {
    MPI_Gather(send, count(b), MPI_FLOAT, recv, count(b), MPI_FLOAT, 0, world);
  });
  sweep_sizes(plan, [&](std::size_t b) {
    MPI_Scatter(send, count(b), MPI_FLOAT, recv, count(b), MPI_FLOAT, 0, world);
  });
  sweep_sizes(plan, [&](std::size_t b) {
    MPI_Alltoall(send, count(b), MPI_FLOAT, recv, count(b), MPI_FLOAT, world);
  });
  sweep_sizes(plan, [&](std::size_t b) {
    MPI_Reduce_scatter_block(send, recv, count(b), MPI_FLOAT, MPI_SUM, world);
  });
  sweep_sizes(plan, [&](std::size_t b) {
    const std::vector<int> counts(static_cast<std::size_t>(ranks), count(b));
    MPI_Reduce_scatter(send, recv, counts.data(), MPI_FLOAT, MPI_SUM, world);
  });
  MPI_Finalize();
  return 0;
}
