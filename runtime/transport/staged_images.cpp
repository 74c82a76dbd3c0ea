#include "transport/staged_images.hpp"

#include "mpi_header.hpp"
#include "transport/device_buffer.hpp"

namespace commlens::runtime {

void* StagedImages::stage(void* buffer, const MessageLayout& layout, bool fill, bool output) {
  if (cuda_aware_ || buffer == MPI_IN_PLACE || layout.span == 0 || !on_device(buffer)) {
    return buffer;
  }
  if (!layout.supported) {
    return nullptr;
  }
  char* const span_start = static_cast<char*>(buffer) + layout.span_start;
  PooledBuffer pinned = pinned_.acquire(layout.span);
  // An output whose datatype leaves gaps is filled too: copy_back() writes the whole span.
  const bool copy_in = fill || (output && !layout.contiguous);
  if (!pinned || (copy_in && !copy_on_legacy_stream(pinned.data(), span_start, layout.span))) {
    return nullptr;
  }
  char* const image = static_cast<char*>(pinned.data());
  bytes_host_ += layout.span;
  images_.push_back({span_start, std::move(pinned), layout.span, output});
  return image - layout.span_start;
}

bool StagedImages::copy_back() {
  bool copied = true;
  for (const Image& image : images_) {
    if (image.output) {
      copied = copy_on_legacy_stream(image.device, image.pinned.data(), image.bytes) && copied;
    }
  }
  return copied;
}

} // namespace commlens::runtime
