#pragma once
// Small calls of ranks sharing one GPU under MPS on the resident kernel (resident/): whether a call
// goes there (from arguments equal on every rank), this rank's checks of its buffers, the run, and
// what its runtime_ops row says. The entries ask it before choosing among their other algorithms.
#include "engine/communicator_engine.hpp"
#include "engine/runtime_records.hpp"
#include "plugin/runtime_state.hpp"
#include "resident/resident_plan.hpp"
#include "resident_rules.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace commlens::runtime {

// The call's size, from arguments equal on every rank: whether the resident kernel may take it.
struct ResidentSize {
  std::uint64_t half_bytes = 0; // the largest contribution of any rank
  std::uint64_t call_bytes = 0; // runtime_ops.bytes: what the table's resident rules compare
  std::string_view collective;  // its name in those rules (resident_rules.hpp)
};

// This rank's part of a call the resident kernel may take.
struct ResidentRequest {
  resident::Plan plan;
  const void* output = nullptr;     // checked with the plan's contribution (null: none on this rank)
  std::size_t output_alignment = 1; // reductions store whole elements
  bool arguments_declined = false;  // this rank's own arguments rule the kernel out
  Reduction reduction{};
};

enum class ResidentRun {
  NotTaken, // the call is not the resident kernel's: the entry goes on with its own algorithms
  Ran,      // done; *rc and the record say how it went
  Declined  // a rank declined it (record.reason says which and why): every rank runs the baseline
};

// The limit that admits the call (the table's rule for its collective and rank count, capped by
// COMMLENS_RUNTIME_RESIDENT_BYTES), or none where the resident kernel does not take it.
std::optional<tuning::ResidentLimit> resident_admits(const RuntimeState& state,
                                                     const CommunicatorEngine& engine, ResidentSize size);
ResidentRun run_eligible_resident(RuntimeState& state, CommunicatorEngine& engine, MPI_Comm comm,
                                  const tuning::ResidentLimit& limit, const ResidentRequest& request,
                                  RuntimeOp& record, int* rc);

// The call on the resident kernel where it is eligible; `build_request` (returning a
// ResidentRequest) runs only then, so that calls the kernel cannot take build no plan.
template <std::invocable BuildRequest>
ResidentRun run_resident(RuntimeState& state, CommunicatorEngine& engine, MPI_Comm comm, ResidentSize size,
                         BuildRequest&& build_request, RuntimeOp& record, int* rc) {
  const std::optional<tuning::ResidentLimit> limit = resident_admits(state, engine, size);
  return limit ? run_eligible_resident(state, engine, comm, *limit,
                                       std::forward<BuildRequest>(build_request)(), record, rc)
               : ResidentRun::NotTaken;
}

// The run table's summary of this rank's resident calls (`runtime_resident.rankR`: where a call's
// time went, on average), when it made any.
void report_resident_calls(RuntimeState& state);

} // namespace commlens::runtime
