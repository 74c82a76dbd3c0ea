#pragma once
// What the driver knows about a user buffer: whether it is plain device memory (the only kind the
// runtime maps into other processes), on which GPU, and which allocation it lies in.
#include "commlens/profiler/event_record.hpp"
#include "datatypes/datatype_runs.hpp"
#include "runtime_channel.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace commlens::runtime {

struct DeviceBuffer {
  int device = -1;
  void* base = nullptr; // the allocation's start (what IPC handles are taken of)
  std::uint64_t buffer_id =
      0; // unique per allocation in this process: a reallocation at the same address differs
};

enum class BufferKind { Host, Device, Managed };

struct BufferQuery {
  BufferKind kind = BufferKind::Host;
  DeviceBuffer device; // valid for Device
};

// The physical GPU of a device ordinal of this process (runtime_channel.hpp's PciGpuId); empty on a
// CUDA error.
std::optional<contract::PciGpuId> pci_gpu_id(int device) noexcept;

// Plain device memory (not managed, not MPI_IN_PLACE, not host): what the runtime stages or maps.
// Asked of the CUDA collector's per-thread range cache when one was handed over, else of the driver
// (about 100 ns per call on an H100 machine, on every host-buffer message with p2p on).
bool on_device(const void* pointer) noexcept;

// The CUDA collector's cached location query (CollectorHooks::buffer_location), which forgets its
// ranges whenever the process allocates or frees GPU memory; null: ask the driver every time.
void use_location_cache(BufferLocation (*cached_location)(const void* buffer) noexcept) noexcept;

// Waits for the work queued on the legacy default stream: the user buffers' producers, there or on
// streams that synchronise with it. False on a CUDA error, which is cleared.
bool wait_for_legacy_stream() noexcept;

// A copy ordered on the legacy default stream (after the application's work there and on the
// streams that synchronise with it, as any CUDA-aware MPI reads and writes user buffers) and
// finished when this returns; false on a CUDA error, which is cleared.
bool copy_on_legacy_stream(void* destination, const void* source, std::size_t bytes) noexcept;

// copy_on_legacy_stream of only the runs (offsets from both bases): a run of equally long runs at
// a constant stride goes as one 2D copy.
bool copy_runs_on_legacy_stream(char* destination_base, const char* source_base,
                                const std::vector<ByteRun>& runs) noexcept;

// One driver call (cuPointerGetAttributes). Host memory, unknown pointers and MPI_IN_PLACE-like
// sentinels come back as Host.
BufferQuery query_buffer(const void* pointer) noexcept;

} // namespace commlens::runtime
