#pragma once
// Small calls of ranks sharing one GPU under MPS on the resident kernel (resident/): whether a call
// goes there (from arguments equal on every rank), this rank's checks of its buffers, the run, and
// what its runtime_ops row says. The entries ask it before choosing among their other algorithms.
#include "engine/communicator_engine.hpp"
#include "engine/runtime_records.hpp"
#include "plugin/runtime_state.hpp"
#include "resident/resident_plan.hpp"

#include <cstddef>
#include <cstdint>

namespace commlens::runtime {

// The allreduce's own limit below COMMLENS_RUNTIME_RESIDENT_BYTES: at 64 KiB the shared-GPU
// kernel (one leader reduces for every rank on the GPU) measured faster than the resident kernels,
// where every rank reduces every contribution itself; at 8 B the resident kernels were (H100,
// 2, 4 and 8 ranks under MPS: docs/performance-runtime.md, "The resident kernel").
inline constexpr std::uint64_t kResidentAllreduceBytes = 16 * 1024;

struct ResidentRequest {
  std::uint64_t half_bytes = 0;                 // the largest contribution of any rank (equal on every rank)
  std::uint64_t most_bytes = ~std::uint64_t{0}; // the collective's own limit, below the setting's
  resident::Plan plan;                          // this rank's part
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

ResidentRun run_resident(RuntimeState& state, CommunicatorEngine& engine, MPI_Comm comm,
                         const ResidentRequest& request, RuntimeOp& record, int* rc);

// The run table's summary of this rank's resident calls (`runtime_resident.rankR`: where a call's
// time went, on average), when it made any.
void report_resident_calls(RuntimeState& state);

} // namespace commlens::runtime
