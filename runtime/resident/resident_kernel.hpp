#pragma once
// The resident kernel (resident_protocol.hpp), callable from host C++.
#include "resident/resident_protocol.hpp"

#include <cstdint>

namespace commlens::runtime::resident {

// Launches the kernel of `family` (kBlocks blocks) that serves arguments.mailbox until it has been
// idle for arguments.linger_ns, is asked to leave, or is posted a call of another family. Returns a
// CUDA error code (0: launched).
int launch_resident_kernel(const KernelArguments& arguments, KernelFamily family, void* stream) noexcept;

// One family's launch, defined in its own translation unit (resident_kernel_family.cu.in).
template <KernelFamily Family>
int launch_resident_family(const KernelArguments& arguments, void* stream) noexcept;

} // namespace commlens::runtime::resident
