#pragma once
// Owns CUPTI's activity buffers: enables the activity kinds that stay on (copies, external
// correlation, NVTX ranges), starts the kernel records' schedule (kernel_recording.hpp), hands
// CUPTI buffers, converts each completed buffer (activity_records.cpp), classifies copies and
// stores one batch of rows per table per buffer. Buffers are flushed every second and at
// MPI_Finalize.
#include "copy_path_classifier.hpp"
#include "kernel_schedule.hpp"

namespace commlens::cuda {

class IpcTracker;

// False (error reported) when a required activity kind could not be enabled.
bool start_activity_collection(const CopyPathClassifier& classifier, IpcTracker& ipc_tracker,
                               const KernelSchedule& kernels, bool user_nvtx);
// Flushes every buffer, stores what is still waiting for its correlation, and disables CUPTI.
void finish_activity_collection();

} // namespace commlens::cuda
