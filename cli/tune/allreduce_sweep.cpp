// The allreduce sweep `commlens tune` profiles: float sums on device buffers (sweep_plan.hpp), in
// place when asked. Sizes are the whole message.
#include "sweep_plan.hpp"

int main(int argc, char** argv) {
  const SweepPlan plan = start_sweep(&argc, &argv);
  const std::size_t largest = plan.sizes.empty() ? 4 : plan.sizes.back();
  const void* send = device_buffer(largest);
  void* recv = device_buffer(largest);
  sweep_sizes(plan, [&](std::size_t bytes) {
    const int count = static_cast<int>(std::max<std::size_t>(bytes / sizeof(float), 1));
    MPI_Allreduce(plan.in_place ? MPI_IN_PLACE : send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  });
  MPI_Finalize();
  return 0;
}
