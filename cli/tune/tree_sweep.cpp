// The bcast and reduce sweep `commlens tune` profiles (sweep_plan.hpp): at each size CALLS bcasts
// then CALLS float-sum reduces, rooted at rank 0. Sizes are the whole message.
#include "sweep_plan.hpp"

int main(int argc, char** argv) {
  const SweepPlan plan = start_sweep(&argc, &argv);
  const std::size_t largest = plan.sizes.empty() ? 4 : plan.sizes.back();
  void* send = device_buffer(largest);
  void* recv = device_buffer(largest);
  const auto count = [](std::size_t bytes) { return static_cast<int>(std::max<std::size_t>(bytes / 4, 1)); };
  sweep_sizes(plan, [&](std::size_t bytes) { MPI_Bcast(send, count(bytes), MPI_FLOAT, 0, MPI_COMM_WORLD); });
  sweep_sizes(plan, [&](std::size_t bytes) {
    MPI_Reduce(send, recv, count(bytes), MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
  });
  MPI_Finalize();
  return 0;
}
