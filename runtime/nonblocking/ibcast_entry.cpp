// entry::MPI_Ibcast: the decision at the call, from arguments equal on every rank, then the
// event-driven tree bcast (collectives/bcast/tree_bcast.hpp) as a job on the communicator's lane,
// or the host-staged baseline posted at once (nonblocking_collectives.hpp). Where the ranks decline
// the tree in the job (a host buffer on some rank ...), the job runs the bcast through node shared
// memory (nonblocking_fallback.hpp), the buffers copied run by run where a datatype is not
// contiguous (decoded here at the call).
//
// What the job shares with the calling thread, and why that is safe (docs/runtime.md, "Nonblocking
// collectives"): the IPC mappings are the lane's own cache, the copies go on the lane's stream and
// the pipeline's events are per thread; the engine's segment counters and barrier numbers are
// used by one thread at a time, since a blocking runtime call on the communicator first drains its
// lane; the noise injector guards its schedule with a mutex; and a bcast needs no scratch memory
// (only a reduce's inner ranks draw on the tree scratch pool). The job calls no MPI.
#include "collectives/bcast/tree_bcast.hpp"
#include "collectives/runtime_state.hpp"
#include "datatypes/message_layout.hpp"
#include "function_ids.hpp"
#include "nonblocking/nonblocking_fallback.hpp"
#include "runtime_entry_points.hpp"
#include "transport/host_staging.hpp"
#include "tree_rules.hpp"

#include <cuda_runtime.h>

namespace commlens::runtime {

namespace {

// The host-staged baseline on `on` (the program's communicator, or the runtime's duplicate): the
// root's buffer staged as the input, every other rank's as the output.
NonblockingCollectives::Baseline ibcast_baseline(void* buffer, int count, MPI_Datatype datatype, int root) {
  return [=](MPI_Comm on, StagedImages& images, MPI_Request* posted) {
    const RootedRole role = rooted_role(root, on);
    const MessageLayout layout = message_layout(count, datatype);
    void* const staged = role.is_root    ? images.stage(buffer, layout, true, false)
                         : role.receives ? images.stage(buffer, layout, false, true)
                                         : buffer;
    if (staged == nullptr) {
      return MPI_ERR_NO_MEM;
    }
    return PMPI_Ibcast(staged, count, datatype, root, on, posted);
  };
}

// Why every rank declines the call from its arguments (null: none).
const char* declined_at_call(const CommunicatorEngine& engine, std::uint64_t bytes, int root) {
  return !engine.usable()       ? engine.why_unusable().c_str()
         : engine.spans_nodes() ? "communicator spans nodes (nonblocking calls run on one node only)"
         : bytes == 0           ? "empty call"
         : root < 0 || root >= engine.size() ? "root outside the communicator"
                                             : nullptr;
}

} // namespace

int entry::MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                      MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  RuntimeState& state = runtime_state();
  const MessageLayout layout = message_layout(count, datatype);
  RuntimeOp record;
  record.call_id = call_id;
  record.function = pmpi::fn::MPI_Ibcast;
  record.start_ns = state.host.now_ns();
  record.comm_id = state.host.communicator_id(comm);
  record.bytes = count > 0 ? layout.bytes : 0; // equal on every rank (the datatypes may differ)
  NonblockingCollectives::Baseline baseline = ibcast_baseline(buffer, count, datatype, root);
  CommunicatorEngine& engine =
      state.engines.engine_for(comm, static_cast<int>(state.host.runtime.ranks_per_node));
  const char* declined = declined_at_call(engine, record.bytes, root);
  if (declined != nullptr ||
      (state.mode == RuntimeMode::AB &&
       !engine.ab_turn_is_runtime(pmpi::fn::MPI_Ibcast, root, record.bytes, MPI_OP_NULL))) {
    record.decision = declined != nullptr ? "fallback" : "ab_baseline";
    record.reason = declined != nullptr ? declined : "";
    return state.nonblocking->post_baseline(comm, std::move(record), baseline, request, implementation);
  }
  // The table's rule (Dynamic selection learns from blocking calls only: a nonblocking call's time
  // is the program's as much as the runtime's). A job that deferred first IPC opens would decline
  // into the baseline, so the lane opens them at once.
  const selection::Decision decision = state.selection.decide({.family = selection::Family::Tree,
                                                               .collective = "bcast",
                                                               .rooted = tuning::RootedCollective::Bcast,
                                                               .bytes = record.bytes,
                                                               .on_lane = true},
                                                              engine_facts(engine));
  const tuning::TreeChoice& choice = decision.tree;
  record.decision_source = decision.source;
  const TreeSettings settings{.shapes = choice.shapes,
                              .segment_bytes = choice.segment_bytes,
                              .window = choice.window,
                              .streams = choice.streams,
                              .blocking = state.blocking_trees,
                              .background_opens = false,
                              .noise = state.noise.get(),
                              .push = choice.push};
  *implementation = static_cast<std::uint8_t>(Implementation::Tree); // the intent, as for MPI_Iallreduce
  int device = 0;
  cudaGetDevice(&device);
  NonblockingCollectives::Job job = [&engine, buffer, bytes = record.bytes, root, settings,
                                     non_contiguous = !layout.contiguous,
                                     runs = fallback_runs(count, datatype)](
                                        const NonblockingCollectives::Lane& lane, RuntimeOp& row) {
    const TreeOutcome outcome = tree_bcast(
        engine, lane.cache, buffer, bytes, root, settings, non_contiguous,
        {.ready_event = lane.ready_event, .stream = lane.stream, .more_streams = &lane.more_streams});
    if (!outcome.result.ran) {
      return run_through_shared_memory(
          engine, lane, outcome.result.reason, row, [&](const StageContext& context) {
            const std::vector<ByteRun> none;
            return shared_memory_bcast(context, {buffer, bytes, runs ? *runs : none}, root, runs.has_value());
          });
    }
    record_tree_run(settings, outcome, row);
    return nonblocking::Outcome{outcome.result.rc, false, {}};
  };
  return state.nonblocking->post(comm, device, std::move(record), std::move(job), std::move(baseline),
                                 request);
}

} // namespace commlens::runtime
