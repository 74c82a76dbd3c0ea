#pragma once
// Memory of a GPU check program's buffer, laid in host memory (malloc) or device memory
// (cudaMalloc) as the check draws it, and freed the same way.
#include "gpu_job.hpp"

#include <cstddef>
#include <cstdlib>

class HostOrDeviceMemory {
public:
  HostOrDeviceMemory(std::size_t bytes, bool on_host) : on_host_(on_host) {
    if (on_host_) {
      data_ = std::malloc(bytes);
    } else {
      CUDA_CHECK(cudaMalloc(&data_, bytes));
    }
  }
  ~HostOrDeviceMemory() {
    if (on_host_) {
      std::free(data_);
    } else {
      cudaFree(data_);
    }
  }
  HostOrDeviceMemory(const HostOrDeviceMemory&) = delete;
  HostOrDeviceMemory& operator=(const HostOrDeviceMemory&) = delete;

  void* data() const noexcept { return data_; }
  bool on_host() const noexcept { return on_host_; }

private:
  bool on_host_;
  void* data_ = nullptr;
};
