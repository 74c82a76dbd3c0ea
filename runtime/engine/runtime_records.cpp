#include "engine/runtime_records.hpp"

#include <cstring>

namespace commlens::runtime {

namespace {
constexpr std::size_t kBatchRows = 256;
constexpr Implementation kImplementations[] = {
    Implementation::Mpi,          Implementation::MpiHostStaged,  Implementation::TwoShot,
    Implementation::OneShot,      Implementation::OneShotStriped, Implementation::SharedGpu,
    Implementation::Hierarchical, Implementation::IpcRendezvous,  Implementation::Tree,
    Implementation::IpcDirect,    Implementation::IpcGpuLeader,   Implementation::NodeSharedMemory,
    Implementation::Resident};
// runtime_ops' phase columns, in table order.
constexpr std::uint64_t CallPhases::*kPhaseColumns[] = {&CallPhases::publish_ns, &CallPhases::map_ns,
                                                        &CallPhases::agree_ns, &CallPhases::barrier_ns};
} // namespace

const char* implementation_name(Implementation implementation) noexcept {
  switch (implementation) {
  case Implementation::MpiHostStaged:
    return "mpi:host_staged";
  case Implementation::TwoShot:
    return "runtime:two_shot";
  case Implementation::OneShot:
    return "runtime:one_shot";
  case Implementation::OneShotStriped:
    return "runtime:one_shot_striped";
  case Implementation::SharedGpu:
    return "runtime:shared_gpu";
  case Implementation::Hierarchical:
    return "runtime:hierarchical";
  case Implementation::IpcRendezvous:
    return "runtime:ipc_rendezvous";
  case Implementation::IpcDirect:
    return "runtime:ipc_direct";
  case Implementation::IpcGpuLeader:
    return "runtime:ipc_gpu_leader";
  case Implementation::Tree:
    return "runtime:tree";
  case Implementation::NodeSharedMemory:
    return "runtime:node_shared_memory";
  case Implementation::Resident:
    return "runtime:resident";
  case Implementation::Mpi:
    break;
  }
  return "mpi";
}

const char* implementation_algorithm(Implementation implementation) noexcept {
  const char* name = implementation_name(implementation);
  const char* colon = std::strchr(name, ':');
  return colon != nullptr ? colon + 1 : name;
}

Implementation allreduce_implementation(tuning::AllreduceAlgorithm algorithm, bool shared_gpu) noexcept {
  switch (algorithm) {
  case tuning::AllreduceAlgorithm::TwoShot:
    return Implementation::TwoShot;
  case tuning::AllreduceAlgorithm::OneShotStriped:
    return Implementation::OneShotStriped;
  case tuning::AllreduceAlgorithm::Hierarchical:
    return Implementation::Hierarchical;
  case tuning::AllreduceAlgorithm::OneShot:
    break;
  }
  return shared_gpu ? Implementation::SharedGpu : Implementation::OneShot;
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

RuntimeRecords::RuntimeRecords(const contract::CudaPluginHost& host) : host_(host) {
  std::vector<std::vector<SqlValue>> names;
  for (const Implementation implementation : kImplementations) {
    names.push_back(
        {std::int64_t{static_cast<int>(implementation)}, std::string(implementation_name(implementation))});
  }
  host_.store_rows("INSERT OR IGNORE INTO implementations (id, name) VALUES (?, ?)", std::move(names));
}

void RuntimeRecords::add(RuntimeOp op) {
  if (op.call_id == 0) {
    return;
  }
  const auto relative = [&](std::uint64_t ns) {
    return static_cast<std::int64_t>(ns) - static_cast<std::int64_t>(host_.init_ns);
  };
  std::vector<SqlValue> row{std::int64_t{host_.run_rank},
                            static_cast<std::int64_t>(op.call_id),
                            std::int64_t{op.function},
                            op.comm_id >= 0 ? SqlValue{op.comm_id} : SqlValue{},
                            relative(op.start_ns),
                            relative(op.end_ns),
                            std::int64_t{static_cast<int>(op.implementation)},
                            std::move(op.algorithm),
                            std::string(op.decision),
                            op.reason.empty() ? SqlValue{} : SqlValue{std::move(op.reason)},
                            static_cast<std::int64_t>(op.bytes),
                            static_cast<std::int64_t>(op.bytes_peer),
                            static_cast<std::int64_t>(op.bytes_host),
                            std::int64_t{op.ipc_opens},
                            std::int64_t{op.chunks},
                            std::int64_t{op.streams},
                            op.decision_source.empty() ? SqlValue{}
                                                       : SqlValue{std::move(op.decision_source)}};
  for (std::uint64_t CallPhases::*const column : kPhaseColumns) {
    if (op.phases) {
      row.emplace_back(static_cast<std::int64_t>((*op.phases).*column));
    } else {
      row.emplace_back();
    }
  }
  std::lock_guard lock(mutex_);
  rows_.push_back(std::move(row));
  if (rows_.size() >= kBatchRows) {
    store_locked();
  }
}

void RuntimeRecords::flush() {
  std::lock_guard lock(mutex_);
  store_locked();
}

void RuntimeRecords::store_locked() {
  if (!rows_.empty()) {
    std::vector<std::vector<SqlValue>> batch;
    batch.swap(rows_);
    host_.store_rows(
        "INSERT INTO runtime_ops VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        std::move(batch));
  }
}

} // namespace commlens::runtime
