#pragma once
// How many GPUs this machine offers, asked the way libcommlens.so asks (dlopen of the driver), so
// the tests build and skip cleanly where there is no CUDA driver at all.
#include <dlfcn.h>

#include <string>

namespace commlens::cuda_tests {

inline int gpu_count() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    return 0;
  }
  const auto init = reinterpret_cast<int (*)(unsigned)>(dlsym(driver, "cuInit"));
  const auto count = reinterpret_cast<int (*)(int*)>(dlsym(driver, "cuDeviceGetCount"));
  int devices = 0;
  if (init == nullptr || count == nullptr || init(0) != 0 || count(&devices) != 0) {
    return 0;
  }
  return devices;
}

// Why a GPU check cannot run here, empty when it can: a build without CUDA (its program's path
// empty) or fewer GPUs than it needs. `what` names the check in the skip message.
inline std::string why_gpu_check_cannot_run(const std::string& program, int gpus_needed,
                                            const std::string& what) {
  if (program.empty()) {
    return "built without CUDA (COMMLENS_WITH_CUDA): skipped " + what;
  }
  const int found = gpu_count();
  if (found < gpus_needed) {
    return "needs " + std::to_string(gpus_needed) + " GPU(s), found " + std::to_string(found) + ": skipped " +
           what;
  }
  return {};
}

} // namespace commlens::cuda_tests
