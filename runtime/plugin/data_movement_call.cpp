// The shared skeleton of the data-movement entries (data_movement_call.hpp).
#include "plugin/data_movement_call.hpp"

#include "datatypes/message_layout.hpp"
#include "dynamic_candidates.hpp"
#include "plugin/dynamic_choice.hpp"
#include "plugin/resident_call.hpp"
#include "plugin/runtime_state.hpp"

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

tuning::MovementShape movement_shape(const CommunicatorEngine& engine, const MovementCall& call) noexcept {
  return {call.geometry.collective, engine.size(), engine.gpu_count(), call.geometry.block_bytes,
          engine.mps()};
}

MovementArguments movement_arguments(const MovementCall& call) noexcept {
  return {.geometry = call.geometry,
          .input = call.input,
          .output = call.output,
          .reduction = call.reduction.value_or(Reduction{}),
          .arguments_declined = call.arguments_declined};
}

Implementation movement_implementation(tuning::MovementAlgorithm algorithm) noexcept {
  switch (algorithm) {
  case tuning::MovementAlgorithm::GpuLeader:
    return Implementation::IpcGpuLeader;
  case tuning::MovementAlgorithm::Staged:
    return Implementation::MpiHostStaged;
  case tuning::MovementAlgorithm::Direct:
    break;
  }
  return Implementation::IpcDirect;
}

bool contiguous_message(int count, MPI_Datatype datatype) noexcept {
  const MessageLayout layout = message_layout(count, datatype);
  return layout.supported && layout.contiguous;
}

std::uint64_t message_bytes(int count, MPI_Datatype datatype) noexcept {
  int type_bytes = 0;
  return count > 0 && PMPI_Type_size(datatype, &type_bytes) == MPI_SUCCESS && type_bytes > 0
             ? static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(type_bytes)
             : 0;
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
  } else if (const ResidentRun resident = run_resident(
                 state, engine, call.comm,
                 {resident::movement_half_bytes(call.geometry), call.bytes,
                  tuning::collective_name(call.geometry.collective)},
                 [&] { return resident_request(engine, call); }, record, &rc);
             resident != ResidentRun::NotTaken) {
    if (resident == ResidentRun::Declined) {
      rc = run_baseline(state, baseline, record);
    }
  } else {
    const tuning::MovementShape shape = movement_shape(engine, call);
    tuning::MovementChoice choice =
        tuning::choose_movement(state.tuning.table.data_movement, state.tuning.name, shape);
    std::optional<DynamicTurn> dynamic;
    if (state.dynamic_selection) {
      const std::vector<tuning::MovementAlgorithm> candidates = tuning::movement_candidates(shape);
      dynamic = dynamic_turn(state, call.comm, call.function, 0, shape.block_bytes, candidates.size());
      if (dynamic) {
        choice = {candidates[dynamic->turn.candidate], dynamic->source};
      }
    }
    const std::uint64_t run_start_ns = state.host.now_ns();
    record.decision_source = std::move(choice.source);
    bool ran = true;
    if (choice.algorithm == tuning::MovementAlgorithm::Staged) {
      // The rule or the learner's turn chose the baseline alike on every rank: no agreement needed.
      record.decision = "runtime";
      rc = run_baseline(state, baseline, record);
      record.algorithm = tuning::movement_algorithm_name(choice.algorithm);
    } else {
      MovementArguments arguments = movement_arguments(call);
      arguments.background_opens = state.host.runtime.background_opens;
      const IpcResult result = ipc_data_movement(engine, state.cache, arguments, choice.algorithm);
      ran = result.ran;
      if (ran) {
        record_ran(result, record);
        record.implementation = movement_implementation(choice.algorithm);
        record.algorithm = tuning::movement_algorithm_name(choice.algorithm);
        record.streams = 1;
        rc = result.rc;
      } else {
        record.decision = "fallback";
        record.reason = result.reason;
        rc = run_baseline(state, baseline, record);
      }
    }
    if (ran && dynamic) {
      learn_from_call(*dynamic, call.comm, state.host.now_ns() - run_start_ns);
    }
  }
  record.end_ns = state.host.now_ns();
  record.close_phases();
  *implementation = static_cast<std::uint8_t>(record.implementation);
  state.records->add(std::move(record));
  return rc;
}

} // namespace commlens::runtime
