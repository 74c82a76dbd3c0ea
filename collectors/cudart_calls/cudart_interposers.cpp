// The CUDA runtime's copy, IPC, allocation, capture and synchronisation functions, defined in
// libcommlens.so so that a program calling a shared libcudart (PyTorch, CuPy, most Python) calls
// these first: LD_PRELOAD puts libcommlens.so ahead of libcudart in the symbol search. Each
// forwards to the next definition (libcudart's) and tells the CUDA collector through the hooks
// table (contract::RuntimeCallHooks), which is empty unless the collector takes copies from these
// calls (COMMLENS_CUDA_COPIES), so otherwise a call costs one lookup of the hook. In trace mode the
// collector also keeps a row of each call (cuda_api_calls), as CUPTI's API records would. A
// program that links libcudart statically (nvcc's default) never reaches them.
//
// No CUDA headers: the runtime's types are spelled here as what they are in its C ABI (cudaError_t
// and cudaMemcpyKind are ints, streams, events and handles pointers, cudaIpcMemHandle_t 64 bytes
// passed by value), so libcommlens.so builds and loads without CUDA.
#include "collector_hooks.hpp"
#include "commlens/profiler/own_time.hpp"
#include "loaded_cudart.hpp"
#include "mpi_header.hpp"

#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace {

using commlens::contract::collector_hooks;
using commlens::contract::RuntimeCallHooks;
using commlens::contract::RuntimeCopyCall;
using Function = commlens::contract::RuntimeFunction;

// What a call returns when libcudart cannot be found behind libcommlens.so: cudaErrorInitializationError.
constexpr int kNoRuntime = 3;

// cudaStreamPerThread: the stream of the _ptds and _ptsz variants (programs built with
// --default-stream per-thread) when they name the default stream.
void* const kPerThreadStream = reinterpret_cast<void*>(0x2);

struct IpcMemHandle { // cudaIpcMemHandle_t
  char reserved[64];
};

// `name` as the loaded object at `path` and its dependencies define it; null where the object is not
// loaded under that path or defines no such name.
void* definition_in(const char* path, const char* name) {
  void* object = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  if (object == nullptr) {
    return nullptr;
  }
  void* found = dlsym(object, name);
  dlclose(object); // RTLD_NOLOAD took a reference; the object stays loaded
  return found;
}

// The runtime's own definition of `name`. Usually the next one after libcommlens.so in the global
// scope. But a library opened with dlopen and RTLD_LOCAL (as Python opens its extensions) binds its
// calls to libcommlens.so's definitions while its libcudart stays in its local scope, out of
// RTLD_NEXT's sight: then the definition of the first libcudart loaded, asked of it directly.
void* runtime_definition(const char* name) {
  if (void* next = dlsym(RTLD_NEXT, name)) {
    return next;
  }
  void* found = nullptr;
  commlens::contract::any_loaded_cudart([&](const char* runtime) {
    found = definition_in(runtime, name);
    return found != nullptr;
  });
  return found;
}

// The runtime a call site's own object links: dlsym on that object searches it and its
// dependencies, so a library that brought its own libcudart (another version beside PyTorch's)
// keeps calling it. Null where the object cannot be asked (the main program, whose libcudart is
// the global one) or finds only this definition.
void* callers_runtime_definition(const char* name, const void* own, const void* return_address) {
  Dl_info info{};
  if (dladdr(return_address, &info) == 0 || info.dli_fname == nullptr || info.dli_fname[0] == '\0') {
    return nullptr;
  }
  void* found = definition_in(info.dli_fname, name);
  return found != own ? found : nullptr;
}

// One interposed function's definitions by call site, per thread: a call site always reaches the
// same runtime, so each is asked once.
struct CallSites {
  static constexpr std::size_t kSites = 8;
  std::array<std::pair<const void*, void*>, kSites> known{};
  std::size_t next_slot = 0;
};

void* definition_at(const char* name, const void* own, const void* return_address, CallSites& sites) {
  for (const auto& [site, definition] : sites.known) {
    if (site == return_address) {
      return definition;
    }
  }
  void* definition = callers_runtime_definition(name, own, return_address);
  if (definition == nullptr) {
    definition = runtime_definition(name);
  }
  if (definition != nullptr) {
    sites.known[sites.next_slot] = {return_address, definition};
    sites.next_slot = (sites.next_slot + 1) % CallSites::kSites;
  }
  return definition;
}

const RuntimeCallHooks& hooks() noexcept {
  return collector_hooks().runtime_calls;
}

// Streams being captured into CUDA graphs now, counted at cudaStreamBeginCapture and
// cudaStreamEndCapture, so that a copy asks whether its stream is one only while some are.
std::atomic<int> active_captures{0};

// What the collector's part of these calls costs the calling threads (profiler_overhead row
// cuda_runtime_calls): the time around the forwarded call while the collector takes part.
commlens::OwnTimeMeter own_time("cuda_runtime_calls");

// A copy: the collector sees it before and after, when it asked to. The hooks are read once: the
// collector empties them at MPI_Finalize, perhaps while another thread copies.
template <class Forward> int copy_call(RuntimeCopyCall copy, Forward forward) {
  const RuntimeCallHooks calls = hooks();
  if (calls.copy_begin == nullptr || calls.copy_end == nullptr) {
    return forward();
  }
  commlens::OwnTimeSample sample(own_time);
  copy.capture_active = active_captures.load(std::memory_order_relaxed) > 0;
  calls.copy_begin(copy);
  const int result = sample.forward(forward);
  calls.copy_end(copy, result == 0);
  return result;
}

// Any other call (none of them frequent), timed on the collector's clock when there is one;
// `after(calls, result, start_ns)` tells the collector what the call changed.
template <class Forward, class After> int other_call(Function function, Forward forward, After after) {
  const RuntimeCallHooks calls = hooks();
  if (calls.now_ns == nullptr) { // the collector takes no part
    const int result = forward();
    after(calls, result, 0);
    return result;
  }
  commlens::OwnTimeSample sample(own_time);
  const std::uint64_t start_ns = calls.now_ns();
  const int result = sample.forward(forward);
  after(calls, result, start_ns);
  if (calls.call_ended != nullptr) {
    calls.call_ended(function, start_ns);
  }
  return result;
}

template <class Forward> int other_call(Function function, Forward forward) {
  return other_call(function, forward, [](const RuntimeCallHooks&, int, std::uint64_t) {});
}

// An allocation or free: afterwards an address may stand for other memory.
template <class Forward> int memory_call(Function function, Forward forward) {
  return other_call(function, forward, [](const RuntimeCallHooks& calls, int, std::uint64_t) {
    if (calls.memory_changed != nullptr) {
      calls.memory_changed();
    }
  });
}

} // namespace

// `next`: the definition of `name` in the runtime of the object that called (definition_at).
#define COMMLENS_NEXT(name)                                                                                  \
  thread_local CallSites name##_sites;                                                                       \
  const auto next = reinterpret_cast<decltype(&name)>(                                                       \
      definition_at(#name, reinterpret_cast<const void*>(&name), __builtin_return_address(0), name##_sites))

extern "C" {

COMMLENS_EXPORT int cudaMemcpy(void* dst, const void* src, std::size_t bytes, int kind) {
  COMMLENS_NEXT(cudaMemcpy);
  return next == nullptr
             ? kNoRuntime
             : copy_call({.function = Function::Memcpy, .destination = dst, .source = src, .bytes = bytes},
                         [&] { return next(dst, src, bytes, kind); });
}

COMMLENS_EXPORT int cudaMemcpy_ptds(void* dst, const void* src, std::size_t bytes, int kind) {
  COMMLENS_NEXT(cudaMemcpy_ptds);
  return next == nullptr ? kNoRuntime
                         : copy_call({.function = Function::MemcpyPtds,
                                      .destination = dst,
                                      .source = src,
                                      .bytes = bytes,
                                      .stream = kPerThreadStream},
                                     [&] { return next(dst, src, bytes, kind); });
}

COMMLENS_EXPORT int cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, int kind, void* stream) {
  COMMLENS_NEXT(cudaMemcpyAsync);
  return next == nullptr ? kNoRuntime
                         : copy_call({.function = Function::MemcpyAsync,
                                      .destination = dst,
                                      .source = src,
                                      .bytes = bytes,
                                      .stream = stream,
                                      .asynchronous = true},
                                     [&] { return next(dst, src, bytes, kind, stream); });
}

COMMLENS_EXPORT int cudaMemcpyAsync_ptsz(void* dst, const void* src, std::size_t bytes, int kind,
                                         void* stream) {
  COMMLENS_NEXT(cudaMemcpyAsync_ptsz);
  return next == nullptr ? kNoRuntime
                         : copy_call({.function = Function::MemcpyAsyncPtsz,
                                      .destination = dst,
                                      .source = src,
                                      .bytes = bytes,
                                      .stream = stream != nullptr ? stream : kPerThreadStream,
                                      .asynchronous = true},
                                     [&] { return next(dst, src, bytes, kind, stream); });
}

COMMLENS_EXPORT int cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device,
                                   std::size_t bytes) {
  COMMLENS_NEXT(cudaMemcpyPeer);
  return next == nullptr ? kNoRuntime
                         : copy_call({.function = Function::MemcpyPeer,
                                      .destination = dst,
                                      .source = src,
                                      .bytes = bytes,
                                      .destination_device = dst_device,
                                      .source_device = src_device},
                                     [&] { return next(dst, dst_device, src, src_device, bytes); });
}

COMMLENS_EXPORT int cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device,
                                        std::size_t bytes, void* stream) {
  COMMLENS_NEXT(cudaMemcpyPeerAsync);
  return next == nullptr ? kNoRuntime
                         : copy_call({.function = Function::MemcpyPeerAsync,
                                      .destination = dst,
                                      .source = src,
                                      .bytes = bytes,
                                      .stream = stream,
                                      .asynchronous = true,
                                      .destination_device = dst_device,
                                      .source_device = src_device},
                                     [&] { return next(dst, dst_device, src, src_device, bytes, stream); });
}

COMMLENS_EXPORT int cudaIpcGetMemHandle(IpcMemHandle* handle, void* address) {
  COMMLENS_NEXT(cudaIpcGetMemHandle);
  return next == nullptr ? kNoRuntime
                         : other_call(
                               Function::IpcGetMemHandle, [&] { return next(handle, address); },
                               [&](const RuntimeCallHooks& calls, int result, std::uint64_t start_ns) {
                                 if (calls.ipc_exported != nullptr && result == 0) {
                                   calls.ipc_exported(address, handle, start_ns);
                                 }
                               });
}

COMMLENS_EXPORT int cudaIpcOpenMemHandle(void** address, IpcMemHandle handle, unsigned int flags) {
  COMMLENS_NEXT(cudaIpcOpenMemHandle);
  return next == nullptr ? kNoRuntime
                         : other_call(
                               Function::IpcOpenMemHandle, [&] { return next(address, handle, flags); },
                               [&](const RuntimeCallHooks& calls, int result, std::uint64_t start_ns) {
                                 if (calls.ipc_opened != nullptr && result == 0) {
                                   calls.ipc_opened(*address, &handle, start_ns);
                                 }
                               });
}

COMMLENS_EXPORT int cudaIpcCloseMemHandle(void* address) {
  COMMLENS_NEXT(cudaIpcCloseMemHandle);
  return next == nullptr ? kNoRuntime
                         : other_call(
                               Function::IpcCloseMemHandle, [&] { return next(address); },
                               [&](const RuntimeCallHooks& calls, int result, std::uint64_t start_ns) {
                                 if (calls.ipc_closed != nullptr && result == 0) {
                                   calls.ipc_closed(address, start_ns);
                                 }
                               });
}

COMMLENS_EXPORT int cudaStreamBeginCapture(void* stream, int mode) {
  COMMLENS_NEXT(cudaStreamBeginCapture);
  return next == nullptr ? kNoRuntime
                         : other_call(
                               Function::StreamBeginCapture, [&] { return next(stream, mode); },
                               [](const RuntimeCallHooks&, int result, std::uint64_t) {
                                 if (result == 0) {
                                   active_captures.fetch_add(1, std::memory_order_relaxed);
                                 }
                               });
}

// A capture ends here whether or not it made a graph; one begun elsewhere (the driver API,
// cudaStreamBeginCaptureToGraph) is not counted, and the count never goes below zero.
COMMLENS_EXPORT int cudaStreamEndCapture(void* stream, void** graph) {
  COMMLENS_NEXT(cudaStreamEndCapture);
  return next == nullptr ? kNoRuntime
                         : other_call(
                               Function::StreamEndCapture, [&] { return next(stream, graph); },
                               [](const RuntimeCallHooks&, int, std::uint64_t) {
                                 int active = active_captures.load(std::memory_order_relaxed);
                                 while (active > 0 && !active_captures.compare_exchange_weak(
                                                          active, active - 1, std::memory_order_relaxed)) {
                                 }
                               });
}

COMMLENS_EXPORT int cudaMalloc(void** memory, std::size_t bytes) {
  COMMLENS_NEXT(cudaMalloc);
  return next == nullptr ? kNoRuntime : memory_call(Function::Malloc, [&] { return next(memory, bytes); });
}

COMMLENS_EXPORT int cudaMallocManaged(void** memory, std::size_t bytes, unsigned int flags) {
  COMMLENS_NEXT(cudaMallocManaged);
  return next == nullptr ? kNoRuntime
                         : memory_call(Function::MallocManaged, [&] { return next(memory, bytes, flags); });
}

COMMLENS_EXPORT int cudaMallocHost(void** memory, std::size_t bytes) {
  COMMLENS_NEXT(cudaMallocHost);
  return next == nullptr ? kNoRuntime
                         : memory_call(Function::MallocHost, [&] { return next(memory, bytes); });
}

COMMLENS_EXPORT int cudaHostAlloc(void** memory, std::size_t bytes, unsigned int flags) {
  COMMLENS_NEXT(cudaHostAlloc);
  return next == nullptr ? kNoRuntime
                         : memory_call(Function::HostAlloc, [&] { return next(memory, bytes, flags); });
}

COMMLENS_EXPORT int cudaHostRegister(void* memory, std::size_t bytes, unsigned int flags) {
  COMMLENS_NEXT(cudaHostRegister);
  return next == nullptr ? kNoRuntime
                         : memory_call(Function::HostRegister, [&] { return next(memory, bytes, flags); });
}

COMMLENS_EXPORT int cudaMallocAsync(void** memory, std::size_t bytes, void* stream) {
  COMMLENS_NEXT(cudaMallocAsync);
  return next == nullptr ? kNoRuntime
                         : memory_call(Function::MallocAsync, [&] { return next(memory, bytes, stream); });
}

COMMLENS_EXPORT int cudaFree(void* memory) {
  COMMLENS_NEXT(cudaFree);
  return next == nullptr ? kNoRuntime : memory_call(Function::Free, [&] { return next(memory); });
}

COMMLENS_EXPORT int cudaFreeHost(void* memory) {
  COMMLENS_NEXT(cudaFreeHost);
  return next == nullptr ? kNoRuntime : memory_call(Function::FreeHost, [&] { return next(memory); });
}

COMMLENS_EXPORT int cudaHostUnregister(void* memory) {
  COMMLENS_NEXT(cudaHostUnregister);
  return next == nullptr ? kNoRuntime : memory_call(Function::HostUnregister, [&] { return next(memory); });
}

COMMLENS_EXPORT int cudaFreeAsync(void* memory, void* stream) {
  COMMLENS_NEXT(cudaFreeAsync);
  return next == nullptr ? kNoRuntime
                         : memory_call(Function::FreeAsync, [&] { return next(memory, stream); });
}

// The waits: where a thread's time went when its GPU work was not done yet.
COMMLENS_EXPORT int cudaDeviceSynchronize() {
  COMMLENS_NEXT(cudaDeviceSynchronize);
  return next == nullptr ? kNoRuntime : other_call(Function::DeviceSynchronize, [&] { return next(); });
}

COMMLENS_EXPORT int cudaStreamSynchronize(void* stream) {
  COMMLENS_NEXT(cudaStreamSynchronize);
  return next == nullptr ? kNoRuntime : other_call(Function::StreamSynchronize, [&] { return next(stream); });
}

COMMLENS_EXPORT int cudaEventSynchronize(void* event) {
  COMMLENS_NEXT(cudaEventSynchronize);
  return next == nullptr ? kNoRuntime : other_call(Function::EventSynchronize, [&] { return next(event); });
}

} // extern "C"
