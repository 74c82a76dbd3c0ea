#pragma once
// Training steps from NVTX ranges (step_ranges.hpp), seen through CUPTI's NVTX callbacks: CUPTI is
// NVTX's tool while the user's ranges are collected (plugin_entry.cpp), and calls back at every
// push and pop of the default domain. A step range opens the profiler's next phase at level 2, its
// pop one at level 3 (the time between steps), as MPI_Pcontrol(2) and (3) would.
#include <cstdint>
#include <string>

namespace commlens::cuda {

// The callback ids to enable in CUPTI's NVTX domain.
const std::uint32_t* nvtx_step_callbacks(std::size_t* count) noexcept;
// From the subscriber's callback, for the NVTX domain.
void on_nvtx_step_callback(std::uint32_t callback_id, const void* callback_data) noexcept;
// Which names mark a step (COMMLENS_STEP_RANGE; empty: none).
void set_step_range_name(std::string name);

} // namespace commlens::cuda
