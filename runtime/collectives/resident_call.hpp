#pragma once
// Small calls of ranks sharing one GPU under MPS on the resident kernel (resident/), where the
// selection (selection/selector.hpp) chose it: this rank's checks of its buffers, the run, and what
// its runtime_ops row says.
#include "collectives/runtime_state.hpp"
#include "engine/communicator_engine.hpp"
#include "engine/runtime_records.hpp"
#include "resident/resident_plan.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace commlens::runtime {

// This rank's part of a call the resident kernel may take.
struct ResidentRequest {
  resident::Plan plan;
  const void* output = nullptr;     // checked with the plan's contribution (null: none on this rank)
  std::size_t output_alignment = 1; // reductions store whole elements
  bool arguments_declined = false;  // this rank's own arguments rule the kernel out
  Reduction reduction{};
};

enum class ResidentRun {
  NotTaken, // the selection did not choose the kernel, or it could not start: the entry goes on
  Ran,      // done; *rc and the record say how it went
  Declined  // a rank declined it (record.reason says which and why): every rank runs the baseline
};

ResidentRun run_chosen_resident(RuntimeState& state, CommunicatorEngine& engine, MPI_Comm comm,
                                const selection::Decision& decision, const ResidentRequest& request,
                                RuntimeOp& record, int* rc);

// The call on the resident kernel where *decision chose it; `build_request` (returning a
// ResidentRequest) runs only then, so that calls the kernel does not take build no plan. Where the
// kernel could not start, *decision becomes the selection's choice without it.
template <std::invocable BuildRequest>
ResidentRun run_resident(RuntimeState& state, CommunicatorEngine& engine, MPI_Comm comm,
                         selection::CallShape call, selection::Decision* decision,
                         BuildRequest&& build_request, RuntimeOp& record, int* rc) {
  if (decision->route != selection::Route::Resident) {
    return ResidentRun::NotTaken;
  }
  const ResidentRun run = run_chosen_resident(state, engine, comm, *decision,
                                              std::forward<BuildRequest>(build_request)(), record, rc);
  if (run == ResidentRun::NotTaken) {
    call.resident_contribution = 0;
    *decision = state.selection.decide(call, engine_facts(engine));
  }
  return run;
}

// The run table's summary of this rank's resident calls (`runtime_resident.rankR`: where a call's
// time went, on average), when it made any.
void report_resident_calls(RuntimeState& state);

} // namespace commlens::runtime
