// The skeleton MPI_Bcast and MPI_Reduce share (rooted_call.hpp).
#include "collectives/pipeline/rooted_call.hpp"

#include "collectives/dynamic_learning.hpp"

namespace commlens::runtime::rooted {

RootedCall start_call(FunctionId function, MPI_Comm comm, int root, std::uint64_t bytes,
                      std::uint64_t call_id) {
  RuntimeState& state = runtime_state();
  const std::uint64_t start_ns = state.host.now_ns();
  if (state.noise) {
    state.noise->point(); // inside the call's time, as noise inside MPI would be
  }
  drain_nonblocking(comm);
  RootedCall call{
      state, {}, state.engines.engine_for(comm, static_cast<int>(state.host.runtime.ranks_per_node)), comm};
  call.record.call_id = call_id;
  call.record.function = function;
  call.record.start_ns = start_ns;
  call.record.comm_id = state.host.communicator_id(comm);
  call.record.bytes = bytes;
  if (!call.engine.usable()) {
    call.record.reason = call.engine.why_unusable();
    call.decline = "";
  } else if (call.engine.spans_nodes()) {
    call.decline = "communicator spans nodes (the trees run within one node)";
  } else if (bytes == 0) {
    call.decline = "empty call";
  } else if (root < 0 || root >= call.engine.size()) {
    call.decline = "root outside the communicator";
  }
  return call;
}

TreeSettings tree_settings(RootedCall& call, const selection::Decision& decision) {
  call.dynamic = decision.dynamic;
  call.record.decision_source = decision.source;
  const tuning::TreeChoice& choice = decision.tree;
  return {choice.shapes,
          choice.segment_bytes,
          choice.window,
          choice.streams,
          call.state.blocking_trees,
          call.state.host.runtime.background_opens,
          call.state.noise.get(),
          choice.push};
}

selection::CallShape rooted_shape(const RootedCall& call, tuning::RootedCollective collective,
                                  std::uint64_t resident_contribution) {
  return {.family = selection::Family::Tree,
          .collective = tuning::collective_name(collective),
          .rooted = collective,
          .bytes = call.record.bytes,
          .resident_contribution = resident_contribution,
          .comm_id = call.record.comm_id,
          .function = call.record.function};
}

// Runtime or fallback, from the pipeline's outcome; false: run the baseline.
bool record_outcome(RootedCall& call, const TreeSettings& settings, const TreeOutcome& outcome) {
  RuntimeOp& record = call.record;
  if (!outcome.result.ran) {
    record.decision = "fallback";
    record.reason = outcome.result.reason;
    return false;
  }
  if (call.dynamic) {
    learn_from_call(*call.dynamic, call.comm, call.state.host.now_ns() - record.start_ns);
  }
  record_tree_run(settings, outcome, record);
  return true;
}

void record_baseline(RuntimeOp& record, const StagedCall& staged) {
  record.implementation = staged.staged ? Implementation::MpiHostStaged : Implementation::Mpi;
  record.algorithm = staged.staged ? "host_staged" : "pmpi";
  record.bytes_host = staged.bytes_host;
  record.chunks = staged.staged ? 1 : 0;
}

int finish_call(RootedCall& call, int rc, std::uint8_t* implementation) {
  call.record.end_ns = call.state.host.now_ns();
  call.record.close_phases();
  *implementation = static_cast<std::uint8_t>(call.record.implementation);
  call.state.records->add(std::move(call.record));
  return rc;
}

// Declined, or the baseline's turn in ab mode (decided alike on every rank): the decision to record.
const char* baseline_decision(RootedCall& call, FunctionId function, int root, MPI_Op op) {
  if (call.decline != nullptr) {
    if (call.record.reason.empty()) {
      call.record.reason = call.decline;
    }
    return "fallback";
  }
  if (call.state.mode == RuntimeMode::AB &&
      !call.engine.ab_turn_is_runtime(function, root, call.record.bytes, op)) {
    return "ab_baseline";
  }
  return nullptr;
}

} // namespace commlens::runtime::rooted
