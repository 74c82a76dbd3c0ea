#pragma once
// Dynamic selection at the runtime's call sites (COMMLENS_RUNTIME_SELECT=dynamic): which candidate
// a call runs, from its learner (tuning/dynamic_learner.hpp), and what the call's time teaches it.
// Each rank times its own calls; at the end of a round the ranks agree on the slowest rank's
// median per candidate with one PMPI_Allreduce on the call's communicator (every rank ends the
// round on the same call, since only calls that ran, which every rank agreed on, count), so every
// rank makes the same choice.
#include "dynamic_learner.hpp"
#include "mpi_header.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace commlens::runtime {

struct RuntimeState;

struct DynamicTurn {
  tuning::BucketLearner* learner = nullptr;
  tuning::LearnerTurn turn;
  std::string source; // runtime_ops.decision_source: what the learner did and on what it based it
};

// The turn of a call with `candidates` candidates, or nothing (static selection, or one candidate:
// nothing to learn). `variant` tells apart calls of one function with other candidate lists.
std::optional<DynamicTurn> dynamic_turn(RuntimeState& state, MPI_Comm comm, std::uint32_t function,
                                        std::uint32_t variant, std::uint64_t bytes, std::size_t candidates);

// After a call that ran its turn's candidate in `elapsed_ns` on this rank (collective over comm at
// the end of a round).
void learn_from_call(const DynamicTurn& dynamic, MPI_Comm comm, std::uint64_t elapsed_ns);

} // namespace commlens::runtime
