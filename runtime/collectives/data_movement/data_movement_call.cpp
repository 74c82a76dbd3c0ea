// The shared skeleton of the data-movement entries (data_movement_call.hpp).
#include "collectives/data_movement/data_movement_call.hpp"

#include "collectives/dynamic_learning.hpp"
#include "collectives/resident_call.hpp"
#include "collectives/runtime_state.hpp"
#include "datatypes/message_layout.hpp"

namespace commlens::runtime {

namespace {

int run_baseline(RuntimeState& state, const std::function<int(StagedBuffers&)>& baseline, RuntimeOp& record) {
  StagedBuffers staged(state.cuda_aware);
  const int rc = baseline(staged);
  record.implementation = staged.staged() ? Implementation::MpiHostStaged : Implementation::Mpi;
  record.algorithm = staged.staged() ? "host_staged" : "pmpi";
  record.bytes_host = staged.bytes_host();
  record.chunks = staged.staged() ? 1 : 0;
  return rc;
}

ResidentRequest resident_request(const CommunicatorEngine& engine, const MovementCall& call) {
  const movement::CallGeometry& geometry = call.geometry;
  return {.plan = resident::plan_movement(geometry, engine.rank(), call.input, call.output),
          .output = movement::has_output(geometry, engine.rank()) ? call.output : nullptr,
          .output_alignment = movement::reduces(geometry.collective) ? geometry.element_bytes : 1,
          .arguments_declined = call.arguments_declined,
          .reduction = call.reduction.value_or(Reduction{})};
}

// The algorithm the selection chose: the staged baseline (chosen alike on every rank, so no
// agreement is needed), or an IPC algorithm, or the baseline where the ranks agreed to hand it over.
int run_chosen_movement(RuntimeState& state, CommunicatorEngine& engine, const MovementCall& call,
                        selection::Decision& decision, const std::function<int(StagedBuffers&)>& baseline,
                        RuntimeOp& record) {
  const std::uint64_t run_start_ns = state.host.now_ns();
  record.decision_source = std::move(decision.source);
  const char* algorithm = tuning::movement_algorithm_name(decision.movement);
  int rc = MPI_SUCCESS;
  bool ran = true;
  if (decision.movement == tuning::MovementAlgorithm::Staged) {
    record.decision = "runtime";
    rc = run_baseline(state, baseline, record);
    record.algorithm = algorithm;
  } else {
    MovementArguments arguments = movement_arguments(call);
    arguments.background_opens = state.host.runtime.background_opens;
    const IpcResult result = ipc_data_movement(engine, state.cache, arguments, decision.movement);
    ran = result.ran;
    if (ran) {
      record_ran(result, record);
      record.implementation = movement_implementation(decision.movement);
      record.algorithm = algorithm;
      record.streams = 1;
      rc = result.rc;
    } else {
      record.decision = "fallback";
      record.reason = result.reason;
      rc = run_baseline(state, baseline, record);
    }
  }
  if (ran && decision.dynamic) {
    learn_from_call(*decision.dynamic, call.comm, state.host.now_ns() - run_start_ns);
  }
  return rc;
}

} // namespace

const char* movement_declined(CommunicatorEngine& engine, const MovementCall& call) {
  if (!engine.usable()) {
    return engine.why_unusable().c_str();
  }
  if (engine.spans_nodes()) {
    return "communicator spans nodes (this collective runs on one node only)";
  }
  if (call.unsupported != nullptr) {
    return call.unsupported;
  }
  if (movement::reduces(call.geometry.collective) && !call.reduction) {
    return "datatype and op pair with no reduction kernel";
  }
  return nullptr;
}

selection::CallShape movement_shape(const MovementCall& call, bool on_lane) noexcept {
  return {.family = selection::Family::Movement,
          .collective = tuning::collective_name(call.geometry.collective),
          .movement = call.geometry.collective,
          .bytes = call.bytes,
          .block_bytes = call.geometry.block_bytes,
          .resident_contribution = on_lane ? 0 : resident::movement_half_bytes(call.geometry),
          .on_lane = on_lane,
          .comm_id = -1,
          .function = call.function};
}

MovementArguments movement_arguments(const MovementCall& call) noexcept {
  return {.geometry = call.geometry,
          .input = call.input,
          .output = call.output,
          .reduction = call.reduction.value_or(Reduction{}),
          .arguments_declined = call.arguments_declined};
}

int run_movement_call(MovementCall& call, std::uint64_t call_id, std::uint8_t* implementation,
                      const std::function<int(StagedBuffers&)>& baseline) noexcept {
  RuntimeState& state = runtime_state();
  RuntimeOp record;
  record.call_id = call_id;
  record.function = call.function;
  record.start_ns = state.host.now_ns();
  record.comm_id = state.host.communicator_id(call.comm);
  record.bytes = call.bytes;
  drain_nonblocking(call.comm);
  CommunicatorEngine& engine =
      state.engines.engine_for(call.comm, static_cast<int>(state.host.runtime.ranks_per_node));
  call.geometry.ranks = engine.size();
  int rc = MPI_SUCCESS;
  if (const char* why = movement_declined(engine, call)) {
    record.decision = "fallback";
    record.reason = why;
    rc = run_baseline(state, baseline, record);
  } else if (state.mode == RuntimeMode::AB &&
             !engine.ab_turn_is_runtime(call.function, call.geometry.block_bytes)) {
    record.decision = "ab_baseline";
    rc = run_baseline(state, baseline, record);
  } else {
    selection::CallShape shape = movement_shape(call, false);
    shape.comm_id = record.comm_id;
    selection::Decision decision = state.selection.decide(shape, engine_facts(engine));
    const ResidentRun resident = run_resident(
        state, engine, call.comm, shape, &decision, [&] { return resident_request(engine, call); }, record,
        &rc);
    if (resident == ResidentRun::Declined) {
      rc = run_baseline(state, baseline, record);
    } else if (resident == ResidentRun::NotTaken) {
      rc = run_chosen_movement(state, engine, call, decision, baseline, record);
    }
  }
  record.end_ns = state.host.now_ns();
  record.close_phases();
  *implementation = static_cast<std::uint8_t>(record.implementation);
  state.records->add(std::move(record));
  return rc;
}

} // namespace commlens::runtime
