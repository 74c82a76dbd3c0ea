// MPI_Allreduce as the runtime runs it: the decision (runtime, A/B baseline turn, or fallback with
// a reason), the algorithm or the baseline, and one runtime_ops record.
#include "collectives/allreduce/ipc_allreduce.hpp"
#include "collectives/dynamic_learning.hpp"
#include "collectives/resident_call.hpp"
#include "collectives/runtime_state.hpp"
#include "device/mpi_reduction_map.hpp"
#include "engine/path_probe.hpp"
#include "function_ids.hpp"
#include "numa_placement.hpp"
#include "runtime_entry_points.hpp"
#include "transport/host_staging.hpp"

namespace commlens::runtime {

namespace {

// A communicator spanning nodes runs its node stages on its node part's engine, votes across the
// whole communicator, and has the node leaders allreduce between nodes (inter_node_stage.hpp).
IpcResult run_choice(CommunicatorEngine& engine, IpcHandleCache& cache, tuning::AllreduceAlgorithm algorithm,
                     IpcArguments args, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (algorithm != tuning::AllreduceAlgorithm::Hierarchical) {
    return ipc_allreduce(engine, cache, args, algorithm);
  }
  args.vote = comm;
  args.between_nodes = [&engine, count = args.count, datatype, op,
                        element_bytes = element_size(args.reduction.type)](void* node_result,
                                                                           const NodeStages& node) {
    return engine.inter_node_stage().allreduce(node_result, count, datatype, op, element_bytes,
                                               engine.node_leaders(), node);
  };
  return ipc_allreduce(engine.node_engine(), cache, args, algorithm);
}

// The baseline half of a call: host staging for device buffers (unless the MPI is CUDA-aware),
// PMPI as it is for host buffers.
int run_baseline(RuntimeState& state, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm, RuntimeOp& record) {
  const StagedCall staged = baseline_allreduce(sendbuf, recvbuf, count, datatype, op, comm, state.cuda_aware);
  record.implementation = staged.staged ? Implementation::MpiHostStaged : Implementation::Mpi;
  record.algorithm = staged.staged ? "host_staged" : "pmpi";
  record.bytes_host = staged.bytes_host;
  record.chunks = staged.staged ? 1 : 0;
  return staged.rc;
}

ResidentRequest resident_request(const CommunicatorEngine& engine, const void* sendbuf, void* recvbuf,
                                 int count, Reduction reduction) {
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const std::size_t element_bytes = element_size(reduction.type);
  return {.plan = resident::plan_allreduce(input, recvbuf, static_cast<std::uint64_t>(count), element_bytes,
                                           engine.size(), engine.rank()),
          .output = recvbuf,
          .output_alignment = element_bytes,
          .reduction = reduction};
}

// The engine's first call: its GPUs' copy paths, read from the node's file or measured, and where
// each GPU sits against the CPUs of the rank that leads it go into the run table (one key per GPU).
void learn_copy_paths(RuntimeState& state, CommunicatorEngine& engine, MPI_Comm comm) {
  if (!engine.first_call() || engine.spans_nodes() || state.host.runtime.paths == "off") {
    return;
  }
  std::string problem;
  if (const std::optional<KnownPaths> known = probe_paths(comm, engine, state.host.runtime.paths, &problem)) {
    state.host.set_run_value("runtime_paths." + known->paths.pci,
                             (known->measured ? "measured, stored in " : "read from ") + known->file + ": " +
                                 topology::describe(known->paths) + "; " +
                                 topology::describe_placement(topology::numa_placement(known->paths.pci),
                                                              topology::process_cpus()));
  }
  if (!problem.empty()) {
    state.host.set_run_value("runtime_paths_problem", problem);
  }
}

// The arguments of one MPI_Allreduce, as the entry was called.
struct AllreduceCall {
  const void* sendbuf;
  void* recvbuf;
  int count;
  MPI_Datatype datatype;
  MPI_Op op;
  MPI_Comm comm;
  Reduction reduction;
};

// The algorithm the selection chose, over IPC, or the baseline where the ranks agreed to hand the
// call to it; what ran goes into the record.
int run_algorithm(RuntimeState& state, CommunicatorEngine& engine, selection::Decision& decision,
                  const AllreduceCall& call, RuntimeOp& record) {
  HostStripe* stripe = nullptr;
  if (decision.allreduce == tuning::AllreduceAlgorithm::OneShotStriped) {
    stripe = engine.host_stripe(call.comm); // its first use is collective: every rank chose alike
    if (stripe == nullptr) {
      selection::Selector::without_host_path(decision);
    }
  }
  const std::uint64_t run_start_ns = state.host.now_ns();
  const IpcResult result = run_choice(engine, state.cache, decision.allreduce,
                                      {.sendbuf = call.sendbuf,
                                       .recvbuf = call.recvbuf,
                                       .count = call.count,
                                       .reduction = call.reduction,
                                       .stripe = stripe,
                                       .host_share = decision.host_percent / 100.0,
                                       .background_opens = state.host.runtime.background_opens},
                                      call.datatype, call.op, call.comm);
  record.decision_source = std::move(decision.source);
  if (!result.ran) {
    record.decision = "fallback";
    record.reason = result.reason;
    return run_baseline(state, call.sendbuf, call.recvbuf, call.count, call.datatype, call.op, call.comm,
                        record);
  }
  if (decision.dynamic) {
    learn_from_call(*decision.dynamic, call.comm, state.host.now_ns() - run_start_ns);
  }
  record_ran(result, record);
  record.implementation = allreduce_implementation(decision.allreduce, decision.shared_gpu);
  record.algorithm = implementation_algorithm(record.implementation);
  record.streams = decision.streams;
  return result.rc;
}

} // namespace

int entry::MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  RuntimeState& state = runtime_state();
  RuntimeOp record;
  record.call_id = call_id;
  record.function = pmpi::fn::MPI_Allreduce;
  record.start_ns = state.host.now_ns();
  record.comm_id = state.host.communicator_id(comm);
  const char* why = nullptr;
  const auto reduction = reduction_for(datatype, op, &why);
  int type_bytes = 0; // the call's bytes whether or not the runtime reduces this type
  record.bytes = count > 0 && PMPI_Type_size(datatype, &type_bytes) == MPI_SUCCESS && type_bytes > 0
                     ? static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(type_bytes)
                     : 0;

  // Everything up to the engine's agreement is decided from arguments equal on every rank, so all
  // ranks take the same branch without talking to each other.
  drain_nonblocking(comm);
  CommunicatorEngine& engine =
      state.engines.engine_for(comm, static_cast<int>(state.host.runtime.ranks_per_node));
  if (engine.usable()) {
    learn_copy_paths(state, engine, comm);
  }
  int rc = MPI_SUCCESS;
  if (!engine.usable() || !reduction || count <= 0) {
    record.decision = "fallback";
    record.reason = !engine.usable() ? engine.why_unusable() : (!reduction ? why : "empty call");
    rc = run_baseline(state, sendbuf, recvbuf, count, datatype, op, comm, record);
  } else if (state.mode == RuntimeMode::AB && !engine.ab_turn_is_runtime(count, datatype, op)) {
    record.decision = "ab_baseline";
    rc = run_baseline(state, sendbuf, recvbuf, count, datatype, op, comm, record);
  } else {
    const selection::CallShape call{.family = selection::Family::Allreduce,
                                    .collective = "allreduce",
                                    .bytes = record.bytes,
                                    .resident_contribution =
                                        static_cast<std::uint64_t>(count) * element_size(reduction->type),
                                    .in_place = sendbuf == MPI_IN_PLACE,
                                    .comm_id = record.comm_id,
                                    .function = pmpi::fn::MPI_Allreduce,
                                    .variant = sendbuf == MPI_IN_PLACE ? 1U : 0U};
    selection::Decision decision = state.selection.decide(call, engine_facts(engine));
    const ResidentRun resident = run_resident(
        state, engine, comm, call, &decision,
        [&] { return resident_request(engine, sendbuf, recvbuf, count, *reduction); }, record, &rc);
    if (resident == ResidentRun::Declined) {
      rc = run_baseline(state, sendbuf, recvbuf, count, datatype, op, comm, record);
    } else if (resident == ResidentRun::NotTaken) {
      rc = run_algorithm(state, engine, decision, {sendbuf, recvbuf, count, datatype, op, comm, *reduction},
                         record);
    }
  }
  record.end_ns = state.host.now_ns();
  record.close_phases();
  *implementation = static_cast<std::uint8_t>(record.implementation);
  state.records->add(std::move(record));
  return rc;
}

} // namespace commlens::runtime
