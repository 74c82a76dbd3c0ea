#pragma once
// Copies and CUDA IPC from the CUDA runtime's calls instead of CUPTI (COMMLENS_CUDA_COPIES): the
// hooks libcommlens.so's interposed cudart functions call (collectors/cudart_calls). A copy's
// memory kinds and devices come from the driver's pointer attributes (cached per allocation
// range, buffer_location_cache.hpp), its MPI call from the thread's current call, and for a sample
// of copies its time on the GPU from CUDA events around it on its stream (device_spans.hpp); the
// others keep the call's host times (cuda_copies.gpu_timed = 0). The copy-path rules are CUPTI's
// (copy_path_classifier.hpp), so cuda_copies reads the same either way. Rows are made on a writer
// thread, as CUPTI makes them on its own. CUPTI is never attached: launches cost nothing more.
// What this source cannot see: copies other than the 1D ones (cudaMemcpy2D, 3D, to and from
// symbols), copies made through a statically linked libcudart or through the driver API (an MPI
// library's), copies captured into CUDA graphs, unified-memory migrations, and the physical device
// of memory mapped from another process (an ipc copy's link).
#include "collector_hooks.hpp"
#include "copy_path_classifier.hpp"
#include "ipc_tracker.hpp"

namespace commlens::cuda {

contract::RuntimeCallHooks runtime_copy_hooks(const CopyPathClassifier& classifier, IpcTracker& tracker);
// Stops the writer and stores the copy and IPC rows still waiting; after finish_device_spans() at
// the end, so that the timed copies still in flight are in.
void store_runtime_copies();

} // namespace commlens::cuda
