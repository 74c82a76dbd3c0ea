// MPI_Reduce as the runtime runs it: the decision (runtime, A/B baseline turn, or fallback with a
// reason), the resident kernel or the tree the selection chose (tree_reduce.hpp), or the baseline,
// and one runtime_ops record.
#include "collectives/pipeline/rooted_call.hpp"
#include "collectives/reduce/tree_reduce.hpp"
#include "collectives/resident_call.hpp"
#include "datatypes/message_layout.hpp"
#include "device/mpi_reduction_map.hpp"
#include "function_ids.hpp"
#include "runtime_entry_points.hpp"

namespace commlens::runtime {

using namespace rooted;

int entry::MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                      int root, MPI_Comm comm, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  RootedCall call = start_call(pmpi::fn::MPI_Reduce, comm, root, message_bytes(count, datatype), call_id);
  const char* why = nullptr;
  const auto reduction = reduction_for(datatype, op, &why);
  if (call.decline == nullptr && !reduction) {
    call.decline = why;
  }
  bool ran = false;
  int rc = MPI_SUCCESS;
  const int me = call.engine.rank();
  if (const char* decision = baseline_decision(call, pmpi::fn::MPI_Reduce, root, op)) {
    call.record.decision = decision;
  } else {
    const selection::CallShape shape =
        rooted_shape(call, tuning::RootedCollective::Reduce, call.record.bytes);
    selection::Decision chosen = call.state.selection.decide(shape, engine_facts(call.engine));
    const ResidentRun resident = run_resident(
        call.state, call.engine, comm, shape, &chosen,
        [&] {
          const std::size_t element_bytes = element_size(reduction->type);
          return ResidentRequest{
              .plan = resident::plan_reduce(sendbuf == MPI_IN_PLACE && me == root ? recvbuf : sendbuf,
                                            recvbuf, static_cast<std::uint64_t>(count), element_bytes,
                                            call.engine.size(), me, root),
              .output = me == root ? recvbuf : nullptr,
              .output_alignment = element_bytes,
              .reduction = *reduction};
        },
        call.record, &rc);
    if (resident != ResidentRun::NotTaken) {
      ran = resident == ResidentRun::Ran;
    } else {
      const TreeSettings settings = tree_settings(call, chosen);
      TreeOutcome outcome = tree_reduce(call.engine, call.state.cache, call.state.tree_scratch, sendbuf,
                                        recvbuf, count, *reduction, root, settings);
      ran = record_outcome(call, settings, outcome);
      rc = outcome.result.rc;
    }
  }
  if (!ran) {
    const StagedCall staged =
        baseline_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, call.state.cuda_aware);
    record_baseline(call.record, staged);
    rc = staged.rc;
  }
  return finish_call(call, rc, implementation);
}

} // namespace commlens::runtime
