#pragma once
// What MPI_Bcast and MPI_Reduce share as the runtime runs them (bcast/bcast_entry.cpp,
// reduce/reduce_entry.cpp): the call's record, engine and noise point, the reasons to decline
// that every rank sees alike, the tree the selection chose, and the record of the outcome.
#include "collectives/pipeline/tree_pipeline.hpp"
#include "collectives/runtime_state.hpp"
#include "transport/host_staging.hpp"

#include <cstdint>
#include <optional>

namespace commlens::runtime::rooted {

struct RootedCall {
  RuntimeState& state;
  RuntimeOp record;
  CommunicatorEngine& engine;
  MPI_Comm comm;
  const char* decline = nullptr;                   // set: the call goes to the baseline with this reason
  std::optional<selection::DynamicTurn> dynamic{}; // a learner's turn, when it chose the settings
};

// The record, the engine, the noise point (inside the call's time, as noise inside MPI would be),
// and the reasons to decline from arguments MPI requires to agree, and from the engine.
RootedCall start_call(FunctionId function, MPI_Comm comm, int root, std::uint64_t bytes,
                      std::uint64_t call_id);

// What the selection decides the call by; resident_contribution 0: not the resident kernel's.
selection::CallShape rooted_shape(const RootedCall& call, tuning::RootedCollective collective,
                                  std::uint64_t resident_contribution);
// The pipeline's settings from the selection's tree, and the decision's source in the record.
TreeSettings tree_settings(RootedCall& call, const selection::Decision& decision);

// Declined, or the baseline's turn in ab mode (decided alike on every rank): the decision to
// record; null: the runtime takes the call.
const char* baseline_decision(RootedCall& call, FunctionId function, int root, MPI_Op op);
// Runtime or fallback, from the pipeline's outcome; false: run the baseline.
bool record_outcome(RootedCall& call, const TreeSettings& settings, const TreeOutcome& outcome);
void record_baseline(RuntimeOp& record, const StagedCall& staged);
// The record stored and the call's implementation returned to the wrapper.
int finish_call(RootedCall& call, int rc, std::uint8_t* implementation);

} // namespace commlens::runtime::rooted
