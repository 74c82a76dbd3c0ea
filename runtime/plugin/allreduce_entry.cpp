// MPI_Allreduce as the runtime runs it: the decision (runtime, A/B baseline turn, or fallback with
// a reason), the algorithm or the baseline, and one runtime_ops record.
#include "collectives/allreduce/ipc_allreduce.hpp"
#include "device/mpi_reduction_map.hpp"
#include "dynamic_candidates.hpp"
#include "engine/path_probe.hpp"
#include "function_ids.hpp"
#include "numa_placement.hpp"
#include "plugin/dynamic_choice.hpp"
#include "plugin/resident_call.hpp"
#include "plugin/runtime_state.hpp"
#include "runtime_entry_points.hpp"
#include "transport/host_staging.hpp"

namespace commlens::runtime {

namespace {

struct AlgorithmChoice {
  IpcAlgorithm algorithm;
  Implementation implementation;
  const char* name;
  int streams;
  std::uint32_t host_percent;
  std::string source; // runtime_ops.decision_source
  HostStripe* stripe = nullptr;
};

// From arguments equal on every rank (and the table, equal on every rank), so every rank chooses
// alike: the host path's first use is collective. The table (runtime/tuning/) picks among the
// algorithms that are safe for the call; which are is code there, not table. Dynamic selection
// (set in *dynamic) picks among the same safe algorithms by the agreed measurements instead.
AlgorithmChoice choose_algorithm(RuntimeState& state, CommunicatorEngine& engine, MPI_Comm comm,
                                 bool in_place, std::uint64_t bytes, std::optional<DynamicTurn>* dynamic) {
  // Across nodes the structure is fixed: node stages over IPC, the node leaders between nodes.
  if (engine.spans_nodes()) {
    return {IpcAlgorithm::ReduceToNodeLeader, Implementation::Hierarchical, "hierarchical", 3, 0,
            "rule: communicator spans nodes"};
  }
  const tuning::CallShape call{engine.size(), engine.gpu_count(), in_place, bytes};
  tuning::Choice choice = tuning::choose(state.tuning.table, state.tuning.name, call, state.tuning_settings);
  if (state.dynamic_selection && !state.tuning_settings.forced) {
    const std::vector<tuning::Choice> candidates = tuning::allreduce_candidates(call, state.tuning_settings);
    *dynamic = dynamic_turn(state, comm, pmpi::fn::MPI_Allreduce, in_place ? 1 : 0, bytes, candidates.size());
    if (*dynamic) {
      choice = candidates[(*dynamic)->turn.candidate];
      choice.source = (*dynamic)->source;
    }
  }
  if (choice.algorithm == tuning::Algorithm::TwoShot) {
    return {IpcAlgorithm::TwoShot, Implementation::TwoShot, "two_shot", 1, 0, std::move(choice.source)};
  }
  if (choice.algorithm == tuning::Algorithm::OneShotStriped) {
    if (HostStripe* stripe = engine.host_stripe(comm)) {
      return {IpcAlgorithm::OneShotStriped,
              Implementation::OneShotStriped,
              "one_shot_striped",
              3,
              choice.host_percent,
              std::move(choice.source),
              stripe};
    }
    choice.source += " (host path unavailable: one_shot)";
  }
  // Ranks sharing GPUs run one-shot as one leader per GPU: the shared-GPU implementation.
  const bool shared = call.gpus < call.ranks;
  return {IpcAlgorithm::OneShot,
          shared ? Implementation::SharedGpu : Implementation::OneShot,
          shared ? "shared_gpu" : "one_shot",
          1,
          0,
          std::move(choice.source)};
}

// A communicator spanning nodes runs its node stages on its node part's engine, votes across the
// whole communicator, and has the node leaders allreduce between nodes (inter_node_stage.hpp).
IpcResult run_choice(CommunicatorEngine& engine, IpcHandleCache& cache, const AlgorithmChoice& choice,
                     AllreduceArguments args, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (choice.algorithm != IpcAlgorithm::ReduceToNodeLeader) {
    return ipc_allreduce(engine, cache, args, choice.algorithm);
  }
  args.vote = comm;
  args.between_nodes = [&engine, count = args.count, datatype, op,
                        element_bytes = element_size(args.reduction.type)](void* node_result,
                                                                           const NodeStages& node) {
    return engine.inter_node_stage().allreduce(node_result, count, datatype, op, element_bytes,
                                               engine.node_leaders(), node);
  };
  return ipc_allreduce(engine.node_engine(), cache, args, choice.algorithm);
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
  } else if (const ResidentRun resident = run_resident(
                 state, engine, comm,
                 {static_cast<std::uint64_t>(count) * element_size(reduction->type), record.bytes,
                  "allreduce"},
                 [&] { return resident_request(engine, sendbuf, recvbuf, count, *reduction); }, record, &rc);
             resident != ResidentRun::NotTaken) {
    if (resident == ResidentRun::Declined) {
      rc = run_baseline(state, sendbuf, recvbuf, count, datatype, op, comm, record);
    }
  } else {
    std::optional<DynamicTurn> dynamic;
    AlgorithmChoice choice =
        choose_algorithm(state, engine, comm, sendbuf == MPI_IN_PLACE, record.bytes, &dynamic);
    const std::uint64_t run_start_ns = state.host.now_ns();
    const IpcResult result = run_choice(engine, state.cache, choice,
                                        {.sendbuf = sendbuf,
                                         .recvbuf = recvbuf,
                                         .count = count,
                                         .reduction = *reduction,
                                         .stripe = choice.stripe,
                                         .host_share = choice.host_percent / 100.0,
                                         .background_opens = state.host.runtime.background_opens},
                                        datatype, op, comm);
    record.decision_source = std::move(choice.source);
    if (result.ran) {
      if (dynamic) {
        learn_from_call(*dynamic, comm, state.host.now_ns() - run_start_ns);
      }
      record_ran(result, record);
      record.implementation = choice.implementation;
      record.algorithm = choice.name;
      record.streams = choice.streams;
      rc = result.rc;
    } else {
      record.decision = "fallback";
      record.reason = result.reason;
      rc = run_baseline(state, sendbuf, recvbuf, count, datatype, op, comm, record);
    }
  }
  record.end_ns = state.host.now_ns();
  record.close_phases();
  *implementation = static_cast<std::uint8_t>(record.implementation);
  state.records->add(std::move(record));
  return rc;
}

} // namespace commlens::runtime
