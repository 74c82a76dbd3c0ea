#pragma once
// Why a rank cannot run a call on one of the runtime's device paths: the agreement over CUDA IPC
// (collectives/allreduce/agreement.hpp) and the resident kernel (resident/) publish it to the other
// ranks as a small code, so that every rank reports the same reason.
#include <cstddef>
#include <cstdint>

namespace commlens::runtime {

enum class Decline : std::int32_t {
  None = 0,
  HostBuffer,
  ManagedBuffer,
  OtherDevice,
  NotExportable,
  StreamError,
  Misaligned,
  Arguments
};

const char* decline_text(Decline decline) noexcept;

// Whether `pointer` is plain device memory on the current GPU (and on *device, when that is
// already set by another buffer of the call), aligned to `alignment`; sets *device. Writes the
// allocation's base and id into *base and *buffer_id when they are not null.
Decline device_buffer_decline(const void* pointer, std::size_t alignment, int* device, void** base = nullptr,
                              std::uint64_t* buffer_id = nullptr) noexcept;

} // namespace commlens::runtime
