#include "collectives/dynamic_learning.hpp"

#include <vector>

namespace commlens::runtime {

void learn_from_call(const selection::DynamicTurn& dynamic, MPI_Comm comm, std::uint64_t elapsed_ns) {
  tuning::BucketLearner& learner = *dynamic.learner;
  learner.record(static_cast<double>(elapsed_ns));
  if (!learner.round_complete()) {
    return;
  }
  std::vector<double> medians = learner.round_medians();
  // MPI_MAX of equal doubles gives every rank the same figures, so the same choice. (An allreduce
  // that fails here has met a broken communicator, which the program's error handler reports.)
  PMPI_Allreduce(MPI_IN_PLACE, medians.data(), static_cast<int>(medians.size()), MPI_DOUBLE, MPI_MAX, comm);
  learner.decide(medians);
}

} // namespace commlens::runtime
