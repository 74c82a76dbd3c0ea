#include "transport/buffer_decline.hpp"

#include "transport/device_buffer.hpp"

#include <cuda_runtime.h>

namespace commlens::runtime {

const char* decline_text(Decline decline) noexcept {
  switch (decline) {
  case Decline::HostBuffer:
    return "host buffer";
  case Decline::ManagedBuffer:
    return "managed (unified) memory buffer";
  case Decline::OtherDevice:
    return "buffers on different GPUs, or not on the current one";
  case Decline::NotExportable:
    return "buffer not exportable through CUDA IPC (e.g. a stream-ordered pool allocation)";
  case Decline::StreamError:
    return "CUDA error while waiting for the buffer's producers";
  case Decline::Misaligned:
    return "buffer not aligned to its element type (the kernels load whole elements)";
  case Decline::Arguments:
    return "arguments the runtime does not take (a non-contiguous datatype, send and receive "
           "blocks of different sizes, or no device memory for a partial result)";
  case Decline::None:
    break;
  }
  return "";
}

Decline device_buffer_decline(const void* pointer, std::size_t alignment, int* device, void** base,
                              std::uint64_t* buffer_id) noexcept {
  const BufferQuery query = query_buffer(pointer);
  if (query.kind != BufferKind::Device) {
    return query.kind == BufferKind::Managed ? Decline::ManagedBuffer : Decline::HostBuffer;
  }
  if (reinterpret_cast<std::uintptr_t>(pointer) % alignment != 0) {
    return Decline::Misaligned;
  }
  int current = -1;
  cudaGetDevice(&current);
  if (query.device.device != current || (*device >= 0 && *device != query.device.device)) {
    return Decline::OtherDevice;
  }
  *device = query.device.device;
  if (base != nullptr) {
    *base = query.device.base;
  }
  if (buffer_id != nullptr) {
    *buffer_id = query.device.buffer_id;
  }
  return Decline::None;
}

} // namespace commlens::runtime
