#pragma once
// runtime_ops rows (one per call the runtime was asked to take) and the implementation names the
// trace's mpi_calls.implementation refers to. Rows are batched and handed to the profiler's writer.
#include "cuda_plugin_interface.hpp"
#include "data_movement_rules.hpp"
#include "transport/call_phases.hpp"
#include "tuning_table.hpp"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace commlens::runtime {

// implementations.id values; stable, so traces of different runs compare.
enum class Implementation : std::uint8_t {
  Mpi = 0,
  MpiHostStaged = 1,
  TwoShot = 2,
  OneShot = 3,
  OneShotStriped = 4,
  SharedGpu = 5,
  Hierarchical = 6,
  IpcRendezvous = 7,
  Tree = 8, // bcast and reduce on a tree (collectives/pipeline/)
  // The data-movement collectives (collectives/data_movement/).
  IpcDirect = 12,
  IpcGpuLeader = 13,
  // A nonblocking collective the ranks declined in its job, run by its lane through node shared
  // memory (transport/shared_memory_collectives.hpp).
  NodeSharedMemory = 14,
  // A small call of ranks sharing one GPU under MPS, run by their resident kernels (resident/).
  Resident = 15
};
const char* implementation_name(Implementation implementation) noexcept;
// The name without its "runtime:" or "mpi:" prefix, as runtime_ops.algorithm says it.
const char* implementation_algorithm(Implementation implementation) noexcept;

// The stored implementation of an algorithm the selection chose: the one place the algorithms'
// enums (tuning/) map to the trace's ids. One-shot with ranks sharing GPUs is shared_gpu.
Implementation allreduce_implementation(tuning::AllreduceAlgorithm algorithm, bool shared_gpu) noexcept;
Implementation movement_implementation(tuning::MovementAlgorithm algorithm) noexcept;

struct RuntimeOp {
  std::uint64_t call_id = 0;
  FunctionId function = 0;
  std::int64_t comm_id = -1;
  std::uint64_t start_ns = 0; // profiler clock
  std::uint64_t end_ns = 0;
  Implementation implementation = Implementation::Mpi;
  std::string algorithm;       // a name, or for trees their shapes, segment size and window
  const char* decision = "";   // runtime, ab_baseline, fallback
  std::string reason;          // empty unless the runtime declined or chose the host path
  std::string decision_source; // what chose the algorithm (tuning::Choice::source); empty: none was
  std::uint64_t bytes = 0;
  std::uint64_t bytes_peer = 0;
  std::uint64_t bytes_host = 0;
  std::uint32_t ipc_opens = 0;
  std::uint32_t chunks = 0;
  std::uint32_t streams = 0;
  // The host phases of a blocking call (call_phases.hpp): this thread's totals when the row was
  // made at the call's start, and what they grew by when the call ended; none for the nonblocking
  // collectives, whose work runs on another thread.
  CallPhases phases_at_start = this_thread_phases;
  std::optional<CallPhases> phases;

  // A blocking entry calls this at its end, on the calling thread.
  void close_phases() noexcept { phases = this_thread_phases - phases_at_start; }
};

class RuntimeRecords {
public:
  explicit RuntimeRecords(const contract::CudaPluginHost& host);
  // Calls made while collection is off (call_id 0) are not recorded, like the calls themselves.
  void add(RuntimeOp op);
  void flush();

private:
  void store_locked();

  const contract::CudaPluginHost& host_;
  std::mutex mutex_;
  std::vector<std::vector<SqlValue>> rows_;
};

} // namespace commlens::runtime
