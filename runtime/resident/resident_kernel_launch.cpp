#include "resident/resident_kernel.hpp"

#include <cuda_runtime.h>

namespace commlens::runtime::resident {

int launch_resident_kernel(const KernelArguments& arguments, KernelFamily family, void* stream) noexcept {
  switch (family) {
  case KernelFamily::Integers8:
    return launch_resident_family<KernelFamily::Integers8>(arguments, stream);
  case KernelFamily::Integers16:
    return launch_resident_family<KernelFamily::Integers16>(arguments, stream);
  case KernelFamily::WideIntegers:
    return launch_resident_family<KernelFamily::WideIntegers>(arguments, stream);
  case KernelFamily::Floats:
  case KernelFamily::Any: // copy-only work: any family's kernel runs it
    return launch_resident_family<KernelFamily::Floats>(arguments, stream);
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

} // namespace commlens::runtime::resident
