#include "allreduce_entry.hpp"

#include "host_staging.hpp"
#include "ipc_allreduce.hpp"
#include "mpi_reduction_map.hpp"

namespace commlens::runtime {

RuntimeState& runtime_state() {
  static RuntimeState state;
  return state;
}

namespace {

constexpr std::uint64_t kOneShotMaxBytes = 256 * 1024;
// Below this the host path's pipeline start-up costs more than its share saves (about 0.1 ms
// against 13% of the NVLink time; docs/runtime.md).
constexpr std::uint64_t kStripeMinBytes = 256u << 20;

struct AlgorithmChoice {
  IpcAlgorithm algorithm;
  Implementation implementation;
  const char* name;
  int streams;
  HostStripe* stripe = nullptr;
};

// From arguments equal on every rank, so every rank chooses alike (the host path's first use is
// collective). One-shot halves the launches and barriers but loads (P-1) times the data per GPU
// where two-shot loads 2 (P-1)/P times per rank: equal for two GPUs, so there one-shot wins at
// every size, for more GPUs up to kOneShotMaxBytes. Its leaders write outputs peers may still be
// reading as inputs, so not in place, unless every rank shares one GPU: then one leader does all
// the work in one kernel, in place too (the shared-GPU design). Two ranks on two GPUs with large
// messages add the host path when COMMLENS_RUNTIME_HOST_PERCENT asks for it (off by default: on
// the H200 pair it measured slower, docs/runtime.md).
AlgorithmChoice choose_algorithm(CommunicatorEngine& engine, MPI_Comm comm, bool in_place,
                                 std::uint64_t bytes, std::uint32_t host_percent) {
  if (engine.spans_nodes()) {
    return {IpcAlgorithm::ReduceToNodeLeader, Implementation::Hierarchical, "hierarchical", 3};
  }
  const int gpus = engine.gpu_count();
  const Implementation one_shot = gpus < engine.size() ? Implementation::SharedGpu : Implementation::OneShot;
  const char* one_shot_name = gpus < engine.size() ? "shared_gpu" : "one_shot";
  if (gpus == 1) {
    return {IpcAlgorithm::OneShot, one_shot, one_shot_name, 1};
  }
  if (in_place || (gpus > 2 && bytes > kOneShotMaxBytes)) {
    return {IpcAlgorithm::TwoShot, Implementation::TwoShot, "two_shot", 1};
  }
  if (engine.size() == 2 && bytes >= kStripeMinBytes && host_percent > 0) {
    if (HostStripe* stripe = engine.host_stripe(comm)) {
      return {IpcAlgorithm::OneShotStriped, Implementation::OneShotStriped, "one_shot_striped", 3, stripe};
    }
  }
  return {IpcAlgorithm::OneShot, one_shot, one_shot_name, 1};
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
                        element_bytes = element_size(args.reduction.type)](void* node_result) {
    return engine.inter_node_stage().allreduce(node_result, count, datatype, op, element_bytes,
                                               engine.node_leaders());
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

} // namespace

int allreduce_entry(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  RuntimeState& state = runtime_state();
  RuntimeOp record;
  record.call_id = call_id;
  record.function = state.allreduce_function;
  record.start_ns = state.host.now_ns();
  record.comm_id = state.host.communicator_id(comm);
  const char* why = nullptr;
  const auto reduction = reduction_for(datatype, op, &why);
  record.bytes =
      reduction && count > 0 ? static_cast<std::uint64_t>(count) * element_size(reduction->type) : 0;

  // Everything up to the engine's agreement is decided from arguments equal on every rank, so all
  // ranks take the same branch without talking to each other.
  CommunicatorEngine& engine =
      state.engines.engine_for(comm, static_cast<int>(state.host.runtime_ranks_per_node));
  int rc = MPI_SUCCESS;
  if (!engine.usable() || !reduction || count <= 0) {
    record.decision = "fallback";
    record.reason = !engine.usable() ? engine.why_unusable() : (!reduction ? why : "empty call");
    rc = run_baseline(state, sendbuf, recvbuf, count, datatype, op, comm, record);
  } else if (state.mode == RuntimeMode::AB && !engine.ab_turn_is_runtime(count, datatype, op)) {
    record.decision = "ab_baseline";
    rc = run_baseline(state, sendbuf, recvbuf, count, datatype, op, comm, record);
  } else {
    const std::uint32_t host_percent = state.host.runtime_host_percent;
    const AlgorithmChoice choice =
        choose_algorithm(engine, comm, sendbuf == MPI_IN_PLACE, record.bytes, host_percent);
    const IpcResult result = run_choice(
        engine, state.cache, choice,
        {sendbuf, recvbuf, count, *reduction, choice.stripe, host_percent / 100.0}, datatype, op, comm);
    if (result.ran) {
      record.decision = "runtime";
      record.implementation = choice.implementation;
      record.algorithm = choice.name;
      record.bytes_host = result.bytes_host;
      record.bytes_peer = result.bytes_peer;
      record.ipc_opens = result.ipc_opens;
      record.chunks = result.chunks;
      record.streams = choice.streams;
      rc = result.rc;
    } else {
      record.decision = "fallback";
      record.reason = result.reason;
      rc = run_baseline(state, sendbuf, recvbuf, count, datatype, op, comm, record);
    }
  }
  record.end_ns = state.host.now_ns();
  *implementation = static_cast<std::uint8_t>(record.implementation);
  state.records->add(std::move(record));
  return rc;
}

} // namespace commlens::runtime
