#pragma once
// Where the other collectors (MPI_T in collectors/mpit, CUDA in collectors/cupti) attach to the
// PMPI wrappers without the wrappers knowing them: each collector, started from lifecycle.cpp after
// the profiler, fills its own slot. An empty slot costs one load and a branch.
#include "commlens/profiler/event_record.hpp"
#include "mpi_header.hpp"
#include "runtime_entries.hpp"

#include <cstddef>
#include <cstdint>

namespace commlens::contract {

struct CollectorSlot {
  // Around the PMPI call of every recorded wrapper (CUDA: push/pop the external correlation id;
  // MPI_T: sample at the boundaries of chosen functions).
  void (*call_enter)(std::uint64_t call_id, FunctionId function) noexcept = nullptr;
  // end_ticks: the call's own end timestamp, so a hook needs no clock read of its own.
  void (*call_exit)(std::uint64_t call_id, FunctionId function, std::uint64_t end_ticks) noexcept = nullptr;
  // After a communicator is registered (its job-wide id known) and before one is freed.
  void (*communicator_created)(MPI_Comm comm, std::int64_t id) = nullptr;
  void (*communicator_freed)(MPI_Comm comm) = nullptr;
  // At MPI_Finalize, before the profiler stops (final samples, flush of activity buffers).
  void (*finalize)() = nullptr;
  // A phase began (pmpi::begin_phase): level 2 is a training step, higher levels the time between
  // steps (CUDA: when kernels are recorded, kernel_schedule.hpp).
  void (*phase_begun)(int level) noexcept = nullptr;
};

enum class Collector { Mpit = 0, Cuda = 1, Runtime = 2 };
inline constexpr int kCollectorSlots = 3;

enum class RequestWork : std::uint8_t { None, Nonblocking, Persistent };

// The GPU collective runtime (runtime/, inside libcommlens_cuda.so) fills these when COMMLENS_RUNTIME
// is on or ab: an entry per `runtime` function of mpi_functions.spec (RuntimeCallEntries, generated
// into runtime_entries.hpp), and the completion of the requests those entries posted.
struct RuntimeEntries : RuntimeCallEntries {
  // A wait/test call completed the request that had this handle_key: the runtime finishes what it
  // posted under it (a staged receive's copy to the device, a rendezvous) and may correct the
  // status. Returns MPI_SUCCESS or the error the request ends with.
  int (*finish_request)(std::uint64_t request_key, MPI_Status* status) = nullptr;
  // MPI_Request_free of such a request, once MPI no longer uses what the runtime posted under it.
  void (*request_freed)(std::uint64_t request_key) = nullptr;
  // What the runtime posted under the request that its completion must finish (detached_requests.hpp
  // keeps such a request when the program frees it in flight).
  RequestWork (*tracks)(std::uint64_t request_key) = nullptr;
  // At the start of every wait and test call: the runtime completes the generalized requests of its
  // nonblocking collectives whose work finished. True while some of them still cannot complete
  // without it: a wait call then tests in a loop (runtime_dispatch.hpp), as MPI alone would never
  // see them complete.
  bool (*progress_requests)() = nullptr;
};

// What host staging of device buffers needs from CUDA (device_staging.hpp), filled by the runtime
// when it is on and the MPI library is not CUDA-aware; copy null: no staging. Every function is
// safe to call from any thread.
struct DeviceStagingOps {
  // Whether the buffer is plain device memory that a host-only MPI cannot read.
  bool (*on_device)(const void* buffer) noexcept = nullptr;
  // The device allocation holding the buffer: its start and size.
  bool (*allocation)(const void* buffer, const void** base, std::size_t* bytes) noexcept = nullptr;
  void* (*allocate_pinned)(std::size_t bytes) noexcept = nullptr;
  void (*free_pinned)(void* memory) noexcept = nullptr;
  // A copy ordered after the program's work on the legacy default stream, done when it returns.
  bool (*copy)(void* destination, const void* source, std::size_t bytes) noexcept = nullptr;
};

// An NCCL call that queues work on a CUDA stream, as the CUDA collector times it on the GPU.
struct StreamCall {
  std::uint64_t call_id = 0; // 0: the call is not recorded (collection off): its work is not timed
  FunctionId function = 0;
  std::int64_t comm_id = -1;
  std::int16_t size_bin = 0;
  std::uint16_t phase = 0;
  const void* stream = nullptr; // the cudaStream_t
};

// The GPU time of NCCL calls (device_spans, device_span_stats), filled by the CUDA collector: CUDA
// events recorded on the call's stream before and after it bracket its work there.
struct StreamWorkHooks {
  // Before the NCCL function is called.
  void (*begin)(const void* stream) noexcept = nullptr;
  // After it returned. Inside ncclGroupStart/End the work is queued only at the group's end.
  void (*end)(const StreamCall& call, bool in_group) noexcept = nullptr;
  // After the outermost ncclGroupEnd returned.
  void (*group_ended)() noexcept = nullptr;
};

// The CUDA runtime functions libcommlens.so interposes (collectors/cudart_calls), as the CUDA
// collector names them in its rows of the program's runtime calls (cuda_api_calls).
enum class RuntimeFunction : std::uint8_t {
  Memcpy,
  MemcpyPtds,
  MemcpyAsync,
  MemcpyAsyncPtsz,
  MemcpyPeer,
  MemcpyPeerAsync,
  IpcGetMemHandle,
  IpcOpenMemHandle,
  IpcCloseMemHandle,
  StreamBeginCapture,
  StreamEndCapture,
  Malloc,
  MallocManaged,
  MallocHost,
  HostAlloc,
  HostRegister,
  MallocAsync,
  Free,
  FreeHost,
  HostUnregister,
  FreeAsync,
  DeviceSynchronize,
  StreamSynchronize,
  EventSynchronize,
};

// A copy the program asked the CUDA runtime for (cudaMemcpy, cudaMemcpyAsync, cudaMemcpyPeer...).
struct RuntimeCopyCall {
  RuntimeFunction function = RuntimeFunction::Memcpy;
  void* destination = nullptr;
  const void* source = nullptr;
  std::size_t bytes = 0;
  const void* stream = nullptr; // the cudaStream_t (null: the default stream)
  bool asynchronous = false;    // cudaMemcpyAsync and cudaMemcpyPeerAsync
  int destination_device = -1;  // cudaMemcpyPeer's devices; -1: from the pointers
  int source_device = -1;
  // Some stream of the process is being captured into a CUDA graph (cudaStreamBeginCapture without
  // its end yet): only then is it worth asking whether this copy's stream is.
  bool capture_active = false;
};

// The CUDA runtime's copy, IPC and allocation calls, interposed in libcommlens.so
// (collectors/cudart_calls) where the program calls a shared libcudart, and handed to the CUDA
// collector when it takes copies from these calls instead of CUPTI (COMMLENS_CUDA_COPIES). Empty:
// the calls only pass through.
struct RuntimeCallHooks {
  // The collector's clock: the start_ns handed to the hooks below.
  std::uint64_t (*now_ns)() noexcept = nullptr;
  // Before and after the copy; copy_end only when copy_begin was called on the same thread, with
  // whether the runtime accepted the copy.
  void (*copy_begin)(const RuntimeCopyCall& copy) noexcept = nullptr;
  void (*copy_end)(const RuntimeCopyCall& copy, bool accepted) noexcept = nullptr;
  // After a successful cudaIpcGetMemHandle, cudaIpcOpenMemHandle (the mapped address) or
  // cudaIpcCloseMemHandle; start_ns is the profiler's time when the call began.
  void (*ipc_exported)(const void* address, const void* handle, std::uint64_t start_ns) noexcept = nullptr;
  void (*ipc_opened)(const void* address, const void* handle, std::uint64_t start_ns) noexcept = nullptr;
  void (*ipc_closed)(const void* address, std::uint64_t start_ns) noexcept = nullptr;
  // After an allocation or free: an address may now stand for other memory.
  void (*memory_changed)() noexcept = nullptr;
  // After every interposed call but the copies, whatever its result, where the collector keeps a
  // row of each call (trace mode); start_ns from now_ns.
  void (*call_ended)(RuntimeFunction function, std::uint64_t start_ns) noexcept = nullptr;
};

struct CollectorHooks {
  CollectorSlot slots[kCollectorSlots];
  RuntimeEntries runtime;
  DeviceStagingOps staging;
  StreamWorkHooks stream_work;
  RuntimeCallHooks runtime_calls;
  // Where a user buffer lives; null means host memory (no CUDA collector).
  BufferLocation (*buffer_location)(const void* buffer) noexcept = nullptr;
};

inline CollectorHooks& collector_hooks() noexcept {
  static CollectorHooks hooks;
  return hooks;
}

inline CollectorSlot& collector_slot(Collector collector) noexcept {
  return collector_hooks().slots[static_cast<int>(collector)];
}

} // namespace commlens::contract
