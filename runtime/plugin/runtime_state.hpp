#pragma once
// What the runtime holds for the whole process between its start and MPI_Finalize: the host table,
// the mode, the engines per communicator, the IPC handle cache, the runtime_ops records, the tuning
// table, and the point-to-point runtime when it is on. The entries (allreduce_entry.cpp,
// p2p_entries.cpp) reach it through runtime_state(); the layers below get what they need passed in.
#include "dynamic_learner.hpp"
#include "engine/communicator_engine.hpp"
#include "engine/noise_injector.hpp"
#include "engine/runtime_records.hpp"
#include "plugin/nonblocking_collectives.hpp"
#include "point_to_point/point_to_point.hpp"
#include "shipped_tables.hpp"
#include "transport/buffer_pool.hpp"
#include "transport/ipc_handle_cache.hpp"

#include "commlens/profiler/config.hpp"

#include <memory>

namespace commlens::runtime {

struct RuntimeState {
  contract::CudaPluginHost host; // a copy: the core's table lives only during the plugin's start
  RuntimeMode mode = RuntimeMode::Off;
  bool cuda_aware = false;
  EngineRegistry engines;
  IpcHandleCache cache{128};
  std::unique_ptr<RuntimeRecords> records;
  tuning::NamedTable tuning;              // the table the algorithm choice reads (runtime_plugin.cpp)
  tuning::ChoiceSettings tuning_settings; // COMMLENS_RUNTIME_ALGORITHM, COMMLENS_RUNTIME_HOST_PERCENT
  std::unique_ptr<PointToPoint> p2p;      // COMMLENS_RUNTIME_COLLECTIVES names p2p
  bool dynamic_selection = false;         // COMMLENS_RUNTIME_SELECT=dynamic|sweep (plugin/dynamic_choice.hpp)
  bool sweep_selection = false;           // COMMLENS_RUNTIME_SELECT=sweep: every candidate in turn
  tuning::LearnerRegistry learners;       // its learners per communicator, operation and size bucket
  // The rooted collectives (bcast, reduce): partial results of reduce's inner ranks, the noise
  // injector (COMMLENS_NOISE, on this rank), COMMLENS_RUNTIME_TREE_PROGRESS=blocking, and
  // COMMLENS_RUNTIME_TREE_STREAMS (unset: the tuning table's streams).
  BufferPool tree_scratch{PoolMemory::Device, std::size_t{256} << 20};
  std::unique_ptr<NoiseInjector> noise;
  bool blocking_trees = false;
  std::optional<std::uint32_t> tree_streams;
  // COMMLENS_RUNTIME_RESIDENT_BYTES (0: off) and _LINGER_US (plugin/resident_call.hpp), and the
  // sums of the resident calls' phases in ns, for the run table.
  std::uint64_t resident_bytes = 0;
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

// Before a blocking runtime collective on comm: the nonblocking ones posted on it before have run
// (they share its engine; MPI orders a communicator's collectives by call order).
void drain_nonblocking(MPI_Comm comm);

} // namespace commlens::runtime
