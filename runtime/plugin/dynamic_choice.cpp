#include "plugin/dynamic_choice.hpp"

#include "plugin/runtime_state.hpp"

#include <vector>

namespace commlens::runtime {

std::optional<DynamicTurn> dynamic_turn(RuntimeState& state, MPI_Comm comm, std::uint32_t function,
                                        std::uint32_t variant, std::uint64_t bytes, std::size_t candidates) {
  // Communicator ids are agreed by the members and never reused, so a learner's history is the same
  // on every rank of its communicator; one without an id (-1) gets no learner.
  const std::int64_t comm_id = state.host.communicator_id(comm);
  if (!state.dynamic_selection || candidates < 2 || comm_id < 0) {
    return std::nullopt;
  }
  const tuning::LearnerKey key{static_cast<std::uint64_t>(comm_id), function, variant,
                               tuning::size_bucket(bytes)};
  tuning::BucketLearner& learner = state.learners.learner(key, candidates);
  const tuning::LearnerTurn turn = learner.next();
  return DynamicTurn{&learner, turn, learner.describe(turn)};
}

void learn_from_call(const DynamicTurn& dynamic, MPI_Comm comm, std::uint64_t elapsed_ns) {
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
