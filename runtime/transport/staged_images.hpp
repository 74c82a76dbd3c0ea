#pragma once
// Pinned host images of a nonblocking call's device buffers, kept until its request completes: the
// host-staged baseline of the runtime's nonblocking collectives (a library that is not CUDA-aware
// must never see a device pointer). Inputs are copied in when staged, outputs copied back by
// copy_back() once MPI finished the call.
#include "datatypes/message_layout.hpp"
#include "transport/buffer_pool.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace commlens::runtime {

class StagedImages {
public:
  StagedImages(BufferPool& pinned, bool cuda_aware) : pinned_(pinned), cuda_aware_(cuda_aware) {}

  // The address MPI gets for `buffer` holding a message of `layout`: the buffer itself (host
  // memory, MPI_IN_PLACE, or a CUDA-aware MPI), else the matching address in a pinned image of the
  // message's span, filled from it when `fill`, copied back to it by copy_back() when `output`.
  // Null when pinning or the copy failed, or the layout is one MPI could not describe.
  void* stage(void* buffer, const MessageLayout& layout, bool fill, bool output);
  const void* stage_input(const void* buffer, const MessageLayout& layout) {
    return stage(const_cast<void*>(buffer), layout, true, false);
  }
  // Copies every output image to its device buffer; false on a failed copy.
  bool copy_back();
  bool staged() const noexcept { return !images_.empty(); }
  std::uint64_t bytes_host() const noexcept { return bytes_host_; }

private:
  struct Image {
    void* device;
    PooledBuffer pinned;
    std::size_t bytes;
    bool output;
  };
  BufferPool& pinned_;
  bool cuda_aware_;
  std::vector<Image> images_;
  std::uint64_t bytes_host_ = 0;
};

} // namespace commlens::runtime
