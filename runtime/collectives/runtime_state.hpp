#pragma once
// What the runtime holds for the whole process between its start and MPI_Finalize: the host table,
// the mode, the engines per communicator, the IPC handle cache, the runtime_ops records, the
// selection model, and the point-to-point and nonblocking runtimes when they are on. The entries
// (each collective's folder, point_to_point/, nonblocking/) reach it through runtime_state(); the
// layers below get what they need passed in. It sits at the collectives' root because every entry
// uses it; the two runtimes above the collectives are only declared here, so that no folder below
// includes theirs (plugin/runtime_state_instance.cpp makes the one instance).
#include "engine/communicator_engine.hpp"
#include "engine/noise_injector.hpp"
#include "engine/runtime_records.hpp"
#include "selector.hpp"
#include "transport/buffer_pool.hpp"
#include "transport/ipc_handle_cache.hpp"

#include <memory>

namespace commlens::runtime {

class PointToPoint;
class NonblockingCollectives;

struct RuntimeState {
  RuntimeState();
  ~RuntimeState();
  RuntimeState(const RuntimeState&) = delete;
  RuntimeState& operator=(const RuntimeState&) = delete;

  contract::CudaPluginHost host; // a copy: the core's table lives only during the plugin's start
  RuntimeMode mode = RuntimeMode::Off;
  bool cuda_aware = false;
  EngineRegistry engines;
  IpcHandleCache cache{128};
  std::unique_ptr<RuntimeRecords> records;
  // Which implementation runs each call (selection/selector.hpp): the tuning table, the settings
  // that override it, and Dynamic selection's learners.
  selection::Selector selection;
  std::unique_ptr<PointToPoint> p2p; // COMMLENS_RUNTIME_COLLECTIVES names p2p
  // The rooted collectives (bcast, reduce): partial results of reduce's inner ranks, the noise
  // injector (COMMLENS_NOISE, on this rank) and COMMLENS_RUNTIME_TREE_PROGRESS=blocking.
  BufferPool tree_scratch{PoolMemory::Device, std::size_t{256} << 20};
  std::unique_ptr<NoiseInjector> noise;
  bool blocking_trees = false;
  // COMMLENS_RUNTIME_RESIDENT_LINGER_US (collectives/resident_call.hpp), and the sums of the
  // resident calls' phases in ns, for the run table.
  std::uint64_t resident_linger_ns = 0;
  struct ResidentSums {
    std::uint64_t calls = 0;
    std::uint64_t launches = 0;
    std::uint64_t checks_ns = 0;     // this rank's buffer checks and the legacy-stream wait
    std::uint64_t host_wait_ns = 0;  // posting the call to seeing it done
    std::uint64_t kernel_ns = 0;     // block 0 taking the call to its done (GPU clock)
    std::uint64_t contribute_ns = 0; // of which: reading the call, the contribution, the flag
    std::uint64_t peer_wait_ns = 0;  //   the other ranks' flags
    std::uint64_t steps_ns = 0;      //   the steps
  } resident_sums;
  // COMMLENS_RUNTIME_COLLECTIVES names a nonblocking collective (iallreduce ...).
  std::unique_ptr<NonblockingCollectives> nonblocking;
};

RuntimeState& runtime_state();

// What the selection needs of the engine (agreed by its ranks).
inline selection::EngineFacts engine_facts(const CommunicatorEngine& engine) {
  return {.ranks = engine.size(),
          .gpus = engine.gpu_count(),
          .spans_nodes = engine.spans_nodes(),
          .mps = engine.mps()};
}

// Before a blocking runtime collective on comm: the nonblocking ones posted on it before have run
// (they share its engine; MPI orders a communicator's collectives by call order).
void drain_nonblocking(MPI_Comm comm);

} // namespace commlens::runtime
