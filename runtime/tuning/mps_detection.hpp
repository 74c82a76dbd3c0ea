#pragma once
// Whether CUDA MPS serves this machine's GPU work: what the data-movement rules may key on
// (data_movement_rules.hpp, "mps") and what `commlens tune` records with a measurement. Without MPS
// the GPU time-slices between the processes' contexts, so an algorithm that works in several
// contexts at once pays a slice for each; under MPS their work runs together.
namespace commlens::runtime::tuning {

// Whether the MPS control daemon runs: its control pipe exists ($CUDA_MPS_PIPE_DIRECTORY, default
// /tmp/nvidia-mps) and a process named nvidia-cuda-mps* is alive (the pipe stays after `quit`).
bool mps_control_daemon_running();

} // namespace commlens::runtime::tuning
