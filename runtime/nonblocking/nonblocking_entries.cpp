// The nonblocking collectives the runtime runs (entry::MPI_Iallreduce, MPI_Iallgather,
// MPI_Ireduce_scatter_block, MPI_Ireduce_scatter): the decision at the call, from arguments equal
// on every rank, then the job its communicator's lane runs or the baseline posted at once
// (nonblocking_collectives.hpp).
#include "collectives/allreduce/ipc_allreduce.hpp"
#include "collectives/data_movement/data_movement_call.hpp"
#include "collectives/runtime_state.hpp"
#include "datatypes/message_layout.hpp"
#include "device/mpi_reduction_map.hpp"
#include "function_ids.hpp"
#include "nonblocking/nonblocking_fallback.hpp"
#include "runtime_entry_points.hpp"

#include <cuda_runtime.h>
#include <optional>
#include <vector>

namespace commlens::runtime {

namespace {

RuntimeOp start_record(RuntimeState& state, FunctionId function, MPI_Comm comm, std::uint64_t call_id,
                       std::uint64_t bytes) {
  RuntimeOp record;
  record.call_id = call_id;
  record.function = function;
  record.start_ns = state.host.now_ns();
  record.comm_id = state.host.communicator_id(comm);
  record.bytes = bytes;
  return record;
}

// A data-movement collective (data_movement_call.hpp's MovementCall) as a nonblocking call;
// `fallback`: the call through node shared memory, should the ranks decline it in its job.
int post_movement(MovementCall call, std::uint64_t call_id, std::uint8_t* implementation,
                  NonblockingCollectives::Baseline baseline, SharedMemoryCollective fallback,
                  MPI_Request* request) {
  RuntimeState& state = runtime_state();
  RuntimeOp record = start_record(state, call.function, call.comm, call_id, call.bytes);
  CommunicatorEngine& engine =
      state.engines.engine_for(call.comm, static_cast<int>(state.host.runtime.ranks_per_node));
  call.geometry.ranks = engine.size();
  const char* declined = movement_declined(engine, call);
  if (declined != nullptr || (state.mode == RuntimeMode::AB &&
                              !engine.ab_turn_is_runtime(call.function, call.geometry.block_bytes))) {
    record.decision = declined != nullptr ? "fallback" : "ab_baseline";
    record.reason = declined != nullptr ? declined : "";
    return state.nonblocking->post_baseline(call.comm, std::move(record), baseline, request, implementation);
  }
  // The table's rule (Dynamic selection learns from blocking calls only: a nonblocking call's time
  // is the program's as much as the runtime's).
  selection::Decision choice = state.selection.decide(movement_shape(call, true), engine_facts(engine));
  record.decision_source = std::move(choice.source);
  if (choice.movement == tuning::MovementAlgorithm::Staged) { // the rule chose the baseline
    record.decision = "runtime";
    return state.nonblocking->post_baseline(call.comm, std::move(record), baseline, request, implementation);
  }
  const Implementation chosen = movement_implementation(choice.movement);
  *implementation = static_cast<std::uint8_t>(chosen); // the intent, as for MPI_Iallreduce
  int device = 0;
  cudaGetDevice(&device);
  NonblockingCollectives::Job job = [&engine, call, algorithm = choice.movement, chosen,
                                     fallback = std::move(fallback)](const NonblockingCollectives::Lane& lane,
                                                                     RuntimeOp& row) {
    MovementArguments arguments = movement_arguments(call);
    arguments.ready_event = lane.ready_event;
    arguments.stream = lane.stream;
    const IpcResult result = ipc_data_movement(engine, lane.cache, arguments, algorithm);
    if (!result.ran) {
      return run_through_shared_memory(engine, lane, result.reason, row, fallback);
    }
    record_ran(result, row);
    row.implementation = chosen;
    row.algorithm = tuning::movement_algorithm_name(algorithm);
    row.streams = 1;
    return nonblocking::Outcome{result.rc, false, {}};
  };
  return state.nonblocking->post(call.comm, device, std::move(record), std::move(job), std::move(baseline),
                                 request);
}

// A reduce-scatter's images: the whole input of `whole_count` elements and this rank's block of
// `my_count`, or in place the whole buffer as input and output; empty when staging failed.
struct ReduceScatterImages {
  const void* send;
  void* receive;
};
std::optional<ReduceScatterImages> stage_reduce_scatter(StagedImages& images, const void* sendbuf,
                                                        void* recvbuf, int whole_count, int my_count,
                                                        MPI_Datatype datatype) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const MessageLayout whole = message_layout(whole_count, datatype);
  void* const receive =
      images.stage(recvbuf, in_place ? whole : message_layout(my_count, datatype), in_place, true);
  const void* const send = in_place ? MPI_IN_PLACE : images.stage_input(sendbuf, whole);
  if (receive == nullptr || send == nullptr) {
    return std::nullopt;
  }
  return ReduceScatterImages{send, receive};
}

// A reduce-scatter through node shared memory (contiguous: its datatype maps to a reduction).
SharedMemoryCollective reduce_scatter_fallback(const MovementCall& call, std::vector<int> counts) {
  return [input = call.input, output = call.output, reduction = call.reduction.value_or(Reduction{}),
          counts = std::move(counts)](const StageContext& context) {
    return shared_memory_reduce_scatter(context, input, output, counts, reduction);
  };
}

// An allgather through node shared memory: the datatypes' layouts decoded here, on the calling
// thread (the lane may not call MPI), for a job that may never need them; contiguous ones cost
// nothing.
SharedMemoryCollective allgather_fallback(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                          void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                          MPI_Comm comm) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const auto output_runs = fallback_runs(recvcount, recvtype);
  const auto input_runs = in_place ? output_runs : fallback_runs(sendcount, sendtype);
  MPI_Aint lower_bound = 0;
  MPI_Aint extent = 0;
  PMPI_Type_get_extent(recvtype, &lower_bound, &extent);
  const auto block_extent = static_cast<std::uint64_t>(recvcount) * static_cast<std::uint64_t>(extent);
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  const void* const input =
      in_place ? static_cast<const char*>(recvbuf) + block_extent * static_cast<std::uint64_t>(rank)
               : sendbuf;
  const std::uint64_t bytes =
      in_place ? message_bytes(recvcount, recvtype) : message_bytes(sendcount, sendtype);
  return [=](const StageContext& context) {
    const bool described = input_runs.has_value() && output_runs.has_value();
    const std::vector<ByteRun> none;
    return shared_memory_allgather(context, {input, bytes, described ? *input_runs : none}, recvbuf,
                                   block_extent, described ? *output_runs : none, described);
  };
}

} // namespace

int entry::MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request,
                          std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  MovementCall call = allgather_call(pmpi::fn::MPI_Iallgather, sendbuf, sendcount, sendtype, recvbuf,
                                     recvcount, recvtype, comm);
  const int ranks = movement_group_size(comm);
  SharedMemoryCollective fallback =
      allgather_fallback(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return post_movement(
      std::move(call), call_id, implementation,
      [=](MPI_Comm on, StagedImages& images, MPI_Request* posted) {
        const bool in_place = sendbuf == MPI_IN_PLACE;
        void* const receive =
            images.stage(recvbuf, message_layout(recvcount * ranks, recvtype), in_place, true);
        const void* const send =
            in_place ? MPI_IN_PLACE : images.stage_input(sendbuf, message_layout(sendcount, sendtype));
        if (receive == nullptr || send == nullptr) {
          return MPI_ERR_NO_MEM;
        }
        return PMPI_Iallgather(send, sendcount, sendtype, receive, recvcount, recvtype, on, posted);
      },
      std::move(fallback), request);
}

int entry::MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm, MPI_Request* request, std::uint64_t call_id,
                                     std::uint8_t* implementation) noexcept {
  MovementCall call = reduce_scatter_block_call(pmpi::fn::MPI_Ireduce_scatter_block, sendbuf, recvbuf,
                                                recvcount, datatype, op, comm);
  const int ranks = movement_group_size(comm);
  SharedMemoryCollective fallback = reduce_scatter_fallback(call, std::vector<int>(ranks, recvcount));
  return post_movement(
      std::move(call), call_id, implementation,
      [=](MPI_Comm on, StagedImages& images, MPI_Request* posted) {
        const auto staged =
            stage_reduce_scatter(images, sendbuf, recvbuf, recvcount * ranks, recvcount, datatype);
        return staged ? PMPI_Ireduce_scatter_block(staged->send, staged->receive, recvcount, datatype, op, on,
                                                   posted)
                      : MPI_ERR_NO_MEM;
      },
      std::move(fallback), request);
}

int entry::MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request,
                               std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  MovementCall call =
      reduce_scatter_call(pmpi::fn::MPI_Ireduce_scatter, sendbuf, recvbuf, recvcounts, datatype, op, comm);
  int inter = 0;
  int me = 0; // as the blocking entry counts it (an inter-communicator goes to the baseline)
  PMPI_Comm_test_inter(comm, &inter);
  if (inter == 0) {
    PMPI_Comm_rank(comm, &me);
  }
  int total = 0;
  for (int rank = 0; rank < movement_group_size(comm); ++rank) {
    total += recvcounts[rank];
  }
  const int mine = recvcounts[me];
  SharedMemoryCollective fallback =
      reduce_scatter_fallback(call, std::vector<int>(recvcounts, recvcounts + movement_group_size(comm)));
  return post_movement(
      std::move(call), call_id, implementation,
      [=](MPI_Comm on, StagedImages& images, MPI_Request* posted) {
        const auto staged = stage_reduce_scatter(images, sendbuf, recvbuf, total, mine, datatype);
        return staged
                   ? PMPI_Ireduce_scatter(staged->send, staged->receive, recvcounts, datatype, op, on, posted)
                   : MPI_ERR_NO_MEM;
      },
      std::move(fallback), request);
}

int entry::MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPI_Request* request, std::uint64_t call_id,
                          std::uint8_t* implementation) noexcept {
  RuntimeState& state = runtime_state();
  const MessageLayout layout = message_layout(count, datatype);
  RuntimeOp record =
      start_record(state, pmpi::fn::MPI_Iallreduce, comm, call_id, count > 0 ? layout.bytes : 0);
  // The host-staged baseline on `on` (the program's communicator, or the runtime's duplicate).
  NonblockingCollectives::Baseline baseline = [=](MPI_Comm on, StagedImages& images, MPI_Request* posted) {
    const bool in_place = sendbuf == MPI_IN_PLACE;
    void* const output = images.stage(recvbuf, layout, in_place, true);
    const void* const input = in_place ? MPI_IN_PLACE : images.stage_input(sendbuf, layout);
    if (output == nullptr || input == nullptr) {
      return MPI_ERR_NO_MEM;
    }
    return PMPI_Iallreduce(input, output, count, datatype, op, on, posted);
  };
  const char* why = nullptr;
  const auto reduction = reduction_for(datatype, op, &why);
  CommunicatorEngine& engine =
      state.engines.engine_for(comm, static_cast<int>(state.host.runtime.ranks_per_node));
  // Decided from arguments equal on every rank, so every rank posts the same way.
  const char* declined = !engine.usable() ? engine.why_unusable().c_str()
                         : engine.spans_nodes()
                             ? "communicator spans nodes (nonblocking calls run on one node only)"
                         : !reduction ? why
                         : count <= 0 ? "empty call"
                                      : nullptr;
  if (declined != nullptr ||
      (state.mode == RuntimeMode::AB && !engine.ab_turn_is_runtime(count, datatype, op))) {
    record.decision = declined != nullptr ? "fallback" : "ab_baseline";
    record.reason = declined != nullptr ? declined : "";
    return state.nonblocking->post_baseline(comm, std::move(record), baseline, request, implementation);
  }
  // The table's rule, as for the movement calls above; the striped algorithm shares the engine's
  // host path with blocking calls, so a lane runs it as one-shot.
  selection::Decision choice = state.selection.decide({.family = selection::Family::Allreduce,
                                                       .collective = "allreduce",
                                                       .bytes = record.bytes,
                                                       .in_place = sendbuf == MPI_IN_PLACE,
                                                       .on_lane = true},
                                                      engine_facts(engine));
  record.decision_source = std::move(choice.source);
  const Implementation chosen = allreduce_implementation(choice.allreduce, choice.shared_gpu);
  int device = 0;
  cudaGetDevice(&device);
  // What mpi_calls.implementation says is the intent at the call; the runtime_ops row, written when
  // a wait or test returns the request, says what ran (the ranks may still agree on the baseline).
  *implementation = static_cast<std::uint8_t>(chosen);
  NonblockingCollectives::Job job = [&engine, sendbuf, recvbuf, count, reduction = *reduction,
                                     algorithm = choice.allreduce,
                                     chosen](const NonblockingCollectives::Lane& lane, RuntimeOp& row) {
    const IpcResult result = ipc_allreduce(engine, lane.cache,
                                           {.sendbuf = sendbuf,
                                            .recvbuf = recvbuf,
                                            .count = count,
                                            .reduction = reduction,
                                            .ready_event = lane.ready_event,
                                            .stream = lane.stream},
                                           algorithm);
    if (!result.ran) {
      return run_through_shared_memory(engine, lane, result.reason, row, [&](const StageContext& context) {
        return shared_memory_allreduce(context, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf,
                                       static_cast<std::size_t>(count), reduction);
      });
    }
    record_ran(result, row);
    row.implementation = chosen;
    row.algorithm = implementation_algorithm(chosen);
    row.streams = 1;
    return nonblocking::Outcome{result.rc, false, {}};
  };
  return state.nonblocking->post(comm, device, std::move(record), std::move(job), std::move(baseline),
                                 request);
}

} // namespace commlens::runtime
