#include "engine/stream_set.hpp"

#include <cuda_runtime.h>

namespace commlens::runtime {

StreamSet::~StreamSet() {
  for (void* stream : streams_) {
    cudaStreamDestroy(static_cast<cudaStream_t>(stream));
  }
}

std::vector<void*> StreamSet::with(void* first, std::uint32_t count) {
  while (streams_.size() + 1 < count) {
    cudaStream_t stream = nullptr;
    if (cudaStreamCreateWithFlags(&stream, non_blocking_ ? cudaStreamNonBlocking : cudaStreamDefault) !=
        cudaSuccess) {
      break;
    }
    streams_.push_back(stream);
  }
  std::vector<void*> chosen{first};
  for (std::size_t i = 0; i + 1 < count && i < streams_.size(); ++i) {
    chosen.push_back(streams_[i]);
  }
  return chosen;
}

} // namespace commlens::runtime
