// MPI_Bcast and MPI_Reduce as the runtime runs them: the decision (runtime, A/B baseline turn, or
// fallback with a reason), the tree, segment size and window from the tuning table, the pipeline
// (collectives/bcast/, collectives/reduce/) or the baseline, and one runtime_ops record.
#include "collectives/reduce/tree_reduce.hpp"
#include "datatypes/message_layout.hpp"
#include "device/mpi_reduction_map.hpp"
#include "dynamic_candidates.hpp"
#include "function_ids.hpp"
#include "plugin/dynamic_choice.hpp"
#include "plugin/resident_call.hpp"
#include "plugin/runtime_state.hpp"
#include "runtime_entry_points.hpp"
#include "transport/host_staging.hpp"
#include "tree_rules.hpp"

namespace commlens::runtime {

namespace {

// What every rooted call starts with: the record, the engine, the noise point, and the reasons to
// decline that every rank sees alike (arguments MPI requires to agree, and the engine).
struct RootedCall {
  RuntimeState& state;
  RuntimeOp record;
  CommunicatorEngine& engine;
  MPI_Comm comm;
  const char* decline = nullptr;        // set: the call goes to the baseline with this reason
  std::optional<DynamicTurn> dynamic{}; // Dynamic selection's turn, when it chose the settings
};

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

TreeSettings tree_settings(RootedCall& call, tuning::RootedCollective collective) {
  RuntimeState& state = call.state;
  const tuning::TreeCall shape{collective, call.engine.size(), call.engine.gpu_count(), call.record.bytes,
                               call.engine.mps()};
  tuning::TreeChoice choice = tuning::choose_tree(state.tuning.table, state.tuning.name, shape);
  if (state.dynamic_selection) {
    std::vector<tuning::TreeChoice> candidates = tuning::tree_candidates(
        state.tuning.table, state.tuning.name, shape,
        state.sweep_selection ? tuning::TreeBreadth::Sweep : tuning::TreeBreadth::Dynamic);
    call.dynamic = dynamic_turn(state, call.comm, call.record.function, 0, shape.bytes, candidates.size());
    if (call.dynamic) {
      choice = std::move(candidates[call.dynamic->turn.candidate]);
      choice.source = call.dynamic->source + " of " + choice.source;
    }
  }
  call.record.decision_source = std::move(choice.source);
  return {choice.shapes,        choice.segment_bytes,
          choice.window,        state.tree_streams.value_or(choice.streams),
          state.blocking_trees, state.host.runtime.background_opens,
          state.noise.get(),    choice.push};
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

std::uint64_t message_bytes(int count, MPI_Datatype datatype) {
  int type_bytes = 0;
  return count > 0 && PMPI_Type_size(datatype, &type_bytes) == MPI_SUCCESS && type_bytes > 0
             ? static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(type_bytes)
             : 0;
}

} // namespace

int entry::MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                     std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  RootedCall call = start_call(pmpi::fn::MPI_Bcast, comm, root, message_bytes(count, datatype), call_id);
  bool ran = false;
  int rc = MPI_SUCCESS;
  const bool contiguous = message_layout(count, datatype).contiguous;
  if (const char* decision = baseline_decision(call, pmpi::fn::MPI_Bcast, root, MPI_OP_NULL)) {
    call.record.decision = decision;
  } else if (const ResidentRun resident = run_resident(
                 call.state, call.engine, comm, {call.record.bytes, call.record.bytes, "bcast"},
                 [&] {
                   return ResidentRequest{
                       .plan = resident::plan_bcast(buffer, call.record.bytes, call.engine.rank(), root),
                       .output = call.engine.rank() == root ? nullptr : buffer,
                       .arguments_declined = !contiguous};
                 },
                 call.record, &rc);
             resident != ResidentRun::NotTaken) {
    ran = resident == ResidentRun::Ran;
  } else {
    const TreeSettings settings = tree_settings(call, tuning::RootedCollective::Bcast);
    TreeOutcome outcome =
        tree_bcast(call.engine, call.state.cache, buffer, call.record.bytes, root, settings, !contiguous);
    ran = record_outcome(call, settings, outcome);
    rc = outcome.result.rc;
  }
  if (!ran) {
    const StagedCall staged = baseline_bcast(buffer, count, datatype, root, comm, call.state.cuda_aware);
    record_baseline(call.record, staged);
    rc = staged.rc;
  }
  return finish_call(call, rc, implementation);
}

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
  } else if (const ResidentRun resident = run_resident(
                 call.state, call.engine, comm, {call.record.bytes, call.record.bytes, "reduce"},
                 [&] {
                   const std::size_t element_bytes = element_size(reduction->type);
                   return ResidentRequest{.plan = resident::plan_reduce(
                                              sendbuf == MPI_IN_PLACE && me == root ? recvbuf : sendbuf,
                                              recvbuf, static_cast<std::uint64_t>(count), element_bytes,
                                              call.engine.size(), me, root),
                                          .output = me == root ? recvbuf : nullptr,
                                          .output_alignment = element_bytes,
                                          .reduction = *reduction};
                 },
                 call.record, &rc);
             resident != ResidentRun::NotTaken) {
    ran = resident == ResidentRun::Ran;
  } else {
    const TreeSettings settings = tree_settings(call, tuning::RootedCollective::Reduce);
    TreeOutcome outcome = tree_reduce(call.engine, call.state.cache, call.state.tree_scratch, sendbuf,
                                      recvbuf, count, *reduction, root, settings);
    ran = record_outcome(call, settings, outcome);
    rc = outcome.result.rc;
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
