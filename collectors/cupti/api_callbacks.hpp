#pragma once
// CUPTI callbacks on the CUDA IPC API (runtime and driver) and on the memcpy calls that may touch
// IPC mappings. A memcpy whose source or destination lies in a mapped range pushes a marker
// external correlation id (kIpcCopyMarker kind) around the call, so that its activity record,
// which carries no addresses, can be classified as ipc when it arrives. Callbacks on allocation and
// free calls make the buffer-location caches forget what they know (buffer_location_cache.hpp).
#include "ipc_tracker.hpp"

namespace commlens::cuda {

// Subscribes; false (error reported) when CUPTI refused.
bool subscribe_api_callbacks(IpcTracker& tracker);
void unsubscribe_api_callbacks();
// After subscribing, while CUPTI is NVTX's tool: the push and pop callbacks that find training
// steps (nvtx_steps.hpp). False (error reported) when CUPTI refused.
bool enable_nvtx_step_callbacks();

// An IPC call that began at start_ns (profiler clock) and just returned, as the tracker takes it.
IpcCall ipc_call_ended(std::uint64_t start_ns, std::uint64_t address);
// The size of the device allocation holding address (0 when unknown).
std::uint64_t allocation_bytes(std::uint64_t address);

} // namespace commlens::cuda
