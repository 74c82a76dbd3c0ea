#include "collectives/data_movement/staged_baseline.hpp"

#include "datatypes/message_layout.hpp"
#include "transport/device_buffer.hpp"
#include "transport/host_staging.hpp"

namespace commlens::runtime {

void* StagedBuffers::stage(const void* buffer, int count, MPI_Datatype datatype, int blocks, bool send_side,
                           bool copy_in) noexcept {
  if (buffer == MPI_IN_PLACE || cuda_aware_ || count <= 0 || !on_device(buffer)) {
    return const_cast<void*>(buffer);
  }
  const MessageLayout layout = message_layout(count, datatype);
  MPI_Aint lower_bound = 0;
  MPI_Aint extent = 0;
  if (!layout.supported || PMPI_Type_get_extent(datatype, &lower_bound, &extent) != MPI_SUCCESS ||
      extent < 0) {
    failed_ = true;
    return nullptr;
  }
  // Block b starts b x count x extent after the first (MPI's layout of consecutive blocks).
  const std::size_t span = layout.span + static_cast<std::size_t>(blocks - 1) *
                                             static_cast<std::size_t>(count) *
                                             static_cast<std::size_t>(extent);
  char* const host = static_cast<char*>(pinned_staging_buffer(send_side, span));
  const char* const device_span = static_cast<const char*>(buffer) + layout.span_start;
  if (host == nullptr || (copy_in && !copy_on_legacy_stream(host, device_span, span))) {
    failed_ = true;
    return nullptr;
  }
  bytes_host_ += span;
  if (!send_side) {
    device_output_ = const_cast<char*>(device_span);
    host_output_ = host;
    output_span_ = span;
  }
  return host - layout.span_start;
}

const void* StagedBuffers::send(const void* buffer, int count, MPI_Datatype datatype, int blocks) noexcept {
  return stage(buffer, count, datatype, blocks, true, true);
}

void* StagedBuffers::receive(void* buffer, int count, MPI_Datatype datatype, int blocks,
                             bool holds_input) noexcept {
  const bool gaps = !message_layout(count, datatype).contiguous;
  return stage(buffer, count, datatype, blocks, false, holds_input || gaps);
}

int StagedBuffers::finish(int rc) noexcept {
  if (failed_) {
    return MPI_ERR_NO_MEM;
  }
  if (device_output_ != nullptr && rc == MPI_SUCCESS &&
      !copy_on_legacy_stream(device_output_, host_output_, output_span_)) {
    return MPI_ERR_OTHER;
  }
  return rc;
}

} // namespace commlens::runtime
