#pragma once
// The resident kernel (resident_protocol.hpp), callable from host C++.
#include "resident/resident_protocol.hpp"

#include <cstdint>

namespace commlens::runtime::resident {

// Launches the kernel (kBlocks blocks) that serves arguments.mailbox until it has been idle for
// arguments.linger_ns or is asked to leave. Returns a CUDA error code (0: launched).
int launch_resident_kernel(const KernelArguments& arguments, void* stream) noexcept;

} // namespace commlens::runtime::resident
