#pragma once
// Switches CUPTI's per-kernel records on and off as the kernel schedule says (kernel_schedule.hpp):
// kernel, memset and synchronisation activity and the API records of launches, memsets and
// synchronisations (which tie them to their MPI or NCCL call). Every span of time in which they
// were on is a row of `kernel_recording`, so a report can tell a step without kernels from a step
// whose kernels were not recorded. Copies are recorded throughout, outside this switch.
#include "kernel_schedule.hpp"

namespace commlens::cuda {

// At start-up, after the activity kinds that stay on: turns kernel records on if the schedule
// starts with them. False (error reported) when CUPTI refused.
bool start_kernel_recording(const KernelSchedule& schedule);
// CollectorSlot::phase_begun.
void kernel_recording_phase_begun(int level) noexcept;
// MPI_Finalize: closes the last span and stores the rows.
void finish_kernel_recording();

} // namespace commlens::cuda
