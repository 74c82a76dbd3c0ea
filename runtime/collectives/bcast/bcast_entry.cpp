// MPI_Bcast as the runtime runs it: the decision (runtime, A/B baseline turn, or fallback with a
// reason), the resident kernel or the tree the selection chose (tree_bcast.hpp), or the baseline,
// and one runtime_ops record.
#include "collectives/bcast/tree_bcast.hpp"
#include "collectives/pipeline/rooted_call.hpp"
#include "collectives/resident_call.hpp"
#include "datatypes/message_layout.hpp"
#include "function_ids.hpp"
#include "runtime_entry_points.hpp"

namespace commlens::runtime {

using namespace rooted;

int entry::MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                     std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  RootedCall call = start_call(pmpi::fn::MPI_Bcast, comm, root, message_bytes(count, datatype), call_id);
  bool ran = false;
  int rc = MPI_SUCCESS;
  const bool contiguous = message_layout(count, datatype).contiguous;
  if (const char* decision = baseline_decision(call, pmpi::fn::MPI_Bcast, root, MPI_OP_NULL)) {
    call.record.decision = decision;
  } else {
    const selection::CallShape shape = rooted_shape(call, tuning::RootedCollective::Bcast, call.record.bytes);
    selection::Decision chosen = call.state.selection.decide(shape, engine_facts(call.engine));
    const ResidentRun resident = run_resident(
        call.state, call.engine, comm, shape, &chosen,
        [&] {
          return ResidentRequest{
              .plan = resident::plan_bcast(buffer, call.record.bytes, call.engine.rank(), root),
              .output = call.engine.rank() == root ? nullptr : buffer,
              .arguments_declined = !contiguous};
        },
        call.record, &rc);
    if (resident != ResidentRun::NotTaken) {
      ran = resident == ResidentRun::Ran;
    } else {
      const TreeSettings settings = tree_settings(call, chosen);
      TreeOutcome outcome =
          tree_bcast(call.engine, call.state.cache, buffer, call.record.bytes, root, settings, !contiguous);
      ran = record_outcome(call, settings, outcome);
      rc = outcome.result.rc;
    }
  }
  if (!ran) {
    const StagedCall staged = baseline_bcast(buffer, count, datatype, root, comm, call.state.cuda_aware);
    record_baseline(call.record, staged);
    rc = staged.rc;
  }
  return finish_call(call, rc, implementation);
}

} // namespace commlens::runtime
