#pragma once
// How many GPUs this machine offers, asked the way libcommlens.so asks (dlopen of the driver), so
// the tests build and skip cleanly where there is no CUDA driver at all.
#include <dlfcn.h>

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

} // namespace commlens::cuda_tests
