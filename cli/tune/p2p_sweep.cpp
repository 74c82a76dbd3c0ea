// The point-to-point sweep `commlens tune` profiles once per host share
// (COMMLENS_RUNTIME_HOST_PERCENT), for two ranks (sweep_plan.hpp): rank 0 sends each message to
// rank 1, which sends it back. Sizes are the message.
#include "sweep_plan.hpp"

int main(int argc, char** argv) {
  const SweepPlan plan = start_sweep(&argc, &argv);
  const std::size_t largest = plan.sizes.empty() ? 1 : plan.sizes.back();
  void* buffer = device_buffer(largest);
  const int peer = plan.job.rank == 0 ? 1 : 0;
  sweep_sizes(plan, [&](std::size_t bytes) {
    if (plan.job.rank > 1) {
      return;
    }
    const int count = static_cast<int>(bytes);
    if (plan.job.rank == 0) {
      MPI_Send(buffer, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(buffer, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buffer, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buffer, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
  });
  MPI_Finalize();
  return 0;
}
