#pragma once
// Copies and CUDA IPC from the CUDA runtime's calls instead of CUPTI (COMMLENS_CUDA_COPIES): the
// hooks libcommlens.so's interposed cudart functions call (collectors/cudart_calls). A copy's
// memory kinds and devices come from the driver's pointer attributes, its time on the GPU from CUDA
// events around it on its stream (device_spans.hpp), its MPI call from the thread's current call;
// the copy-path rules are CUPTI's (copy_path_classifier.hpp), so cuda_copies reads the same either
// way. CUPTI is then never attached: launches cost nothing more. What this source cannot see:
// copies made through a statically linked libcudart or through the driver API (an MPI library's),
// and unified-memory migrations.
#include "collector_hooks.hpp"
#include "copy_path_classifier.hpp"
#include "ipc_tracker.hpp"

namespace commlens::cuda {

contract::RuntimeCallHooks runtime_copy_hooks(const CopyPathClassifier& classifier, IpcTracker& tracker);
// Stores the copy and IPC rows gathered so far; after finish_device_spans() at the end, so that the
// copies still in flight are in.
void store_runtime_copies();

} // namespace commlens::cuda
