#pragma once
// MPI_Allreduce as the runtime runs it: the decision (runtime, A/B baseline turn, or fallback with
// a reason), the algorithm or the baseline, and one runtime_ops record.
#include "communicator_engine.hpp"
#include "ipc_handle_cache.hpp"
#include "point_to_point.hpp"
#include "runtime_records.hpp"
#include "shipped_tables.hpp"

#include "commlens/profiler/config.hpp"

namespace commlens::runtime {

struct RuntimeState {
  pmpi::CudaPluginHost host; // a copy: the core's table lives only during the plugin's start
  RuntimeMode mode = RuntimeMode::Off;
  bool cuda_aware = false;
  EngineRegistry engines;
  IpcHandleCache cache{128};
  std::unique_ptr<RuntimeRecords> records;
  FunctionId allreduce_function = 0;
  tuning::NamedTable tuning;              // the table the algorithm choice reads (runtime_plugin.cpp)
  tuning::ChoiceSettings tuning_settings; // COMMLENS_RUNTIME_ALGORITHM, COMMLENS_RUNTIME_HOST_PERCENT
  std::unique_ptr<PointToPoint> p2p;      // COMMLENS_RUNTIME_COLLECTIVES names p2p
  PointToPointFunctions p2p_functions;
};

RuntimeState& runtime_state();

int allreduce_entry(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, std::uint64_t call_id, std::uint8_t* implementation) noexcept;

} // namespace commlens::runtime
