#pragma once
// The runtime's start inside libcommlens_cuda.so: reads COMMLENS_RUNTIME (through the host table)
// and installs its entries in the PMPI collector's hooks.
#include "cuda_plugin_interface.hpp"

namespace commlens::runtime {

// Null when the runtime started (or was not asked for), else why not.
const char* start_runtime(const contract::CudaPluginHost& host);

} // namespace commlens::runtime
