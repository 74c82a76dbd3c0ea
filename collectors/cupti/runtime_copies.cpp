#include "runtime_copies.hpp"

#include "api_call_rows.hpp"
#include "api_callbacks.hpp"
#include "buffer_location_cache.hpp"
#include "copy_rows.hpp"
#include "copy_runs.hpp"
#include "device_spans.hpp"
#include "plugin_context.hpp"
#include "runtime_functions.hpp"

#include <cuda.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace commlens::cuda {

namespace {

// Which copies are timed on the GPU. Two event records and their completion cost a few
// microseconds of the copying thread, which a training step making hundreds of small copies (DDP
// copies every gradient into its bucket) would feel; so a thread times its copies at most once in
// kTimingGapNs, and every copy of kAlwaysTimedBytes or more (which takes far longer on the GPU than
// its events on the host). The others keep their call's host times, marked cuda_copies.gpu_timed = 0.
constexpr std::uint64_t kTimingGapNs = 5'000'000;
constexpr std::size_t kAlwaysTimedBytes = std::size_t{16} << 20;
constexpr std::chrono::milliseconds kStorePeriod{500};

// Summary mode stores a run of untimed copies as one row (copy_runs.hpp) while they follow one
// another within this gap: a timeline still places copying to the millisecond.
constexpr std::uint64_t kRunGapNs = 1'000'000;

struct ThreadCopy { // the copy this thread is making, between copy_begin and copy_end
  std::uint64_t call_start_ns = 0;
  bool timed = false;
  bool captured = false; // queued into a CUDA graph being captured: it does not run now
};

const CopyPathClassifier* classifier = nullptr;
IpcTracker* ipc = nullptr;

// In trace mode every interposed call has a cuda_api_calls row, as CUPTI's API records would give;
// a copy's row and its call's share a correlation id, numbered here (CUPTI is not attached, so
// no id of its own can collide).
std::atomic<std::uint32_t> next_correlation_id{1};

// The writer thread's state, never destroyed: a process may exit without the collector's finalize
// (then the thread is still waiting on it).
struct Writer {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<CopyCall> pending;  // as the threads left them; rows are made on the writer thread
  std::vector<CudaApiCall> calls; // trace mode
  bool stopping = false;
  std::thread thread;
};
Writer& writer = *new Writer;

thread_local ThreadCopy this_copy;

// The calling thread's Linux id, asked of the kernel once per thread (gettid is a system call).
std::uint32_t this_thread() noexcept {
  thread_local const auto id = static_cast<std::uint32_t>(gettid());
  return id;
}
thread_local std::uint64_t last_timed_ns = 0;
thread_local std::pair<const void*, std::uint32_t> last_stream{reinterpret_cast<const void*>(-1), 0};

CopyDirection direction_of(MemoryKind source, std::uint32_t source_device, MemoryKind destination,
                           std::uint32_t destination_device) {
  if (is_host_memory(source)) {
    return is_host_memory(destination) ? CopyDirection::HtoH : CopyDirection::HtoD;
  }
  if (is_host_memory(destination)) {
    return CopyDirection::DtoH;
  }
  return source_device == destination_device ? CopyDirection::DtoD : CopyDirection::PtoP;
}

// The driver's id of the stream (the stream column where CUPTI is not attached), remembered for
// the stream this thread copied on last.
std::uint32_t stream_id_of(const void* stream) {
  if (last_stream.first != stream) {
    unsigned long long id = 0;
    cuStreamGetId(static_cast<CUstream>(const_cast<void*>(stream)), &id);
    last_stream = {stream, static_cast<std::uint32_t>(id)};
  }
  return last_stream.second;
}

// The device that runs a copy: that of its GPU memory where only one device holds it; the current
// one, asked of the driver (whose stream it is queued on), for copies between two GPUs or two host
// buffers, which are rare.
std::uint32_t copying_device(const MemoryAt& source, const MemoryAt& destination) {
  if (source.device < 0 || destination.device < 0 || source.device == destination.device) {
    const std::int32_t only = destination.device >= 0 ? destination.device : source.device;
    if (only >= 0) {
      return static_cast<std::uint32_t>(only);
    }
  }
  CUdevice current = 0;
  return cuCtxGetDevice(&current) == CUDA_SUCCESS ? static_cast<std::uint32_t>(current) : 0;
}

CudaCopy describe(const contract::RuntimeCopyCall& call) {
  // A copy's ends are pageable memory where the driver knows nothing; null ones fail the call.
  const MemoryAt source = cached_memory_at(call.source);
  const MemoryAt destination = cached_memory_at(call.destination);
  const std::uint32_t device = copying_device(source, destination);
  // cudaMemcpyPeer names the devices; host memory is on the copy's.
  const auto device_of = [device](int named, const MemoryAt& end) {
    return static_cast<std::uint32_t>(named >= 0 ? named : end.device >= 0 ? end.device : device);
  };
  CudaCopy copy;
  copy.device = device;
  copy.src_device = device_of(call.source_device, source);
  copy.dst_device = device_of(call.destination_device, destination);
  copy.src_kind = source.kind;
  copy.dst_kind = destination.kind;
  copy.bytes = call.bytes;
  copy.direction = direction_of(source.kind, copy.src_device, destination.kind, copy.dst_device);
  copy.touches_ipc_mapping =
      ipc->has_mappings() && (ipc->is_mapped(reinterpret_cast<std::uint64_t>(call.source)) ||
                              ipc->is_mapped(reinterpret_cast<std::uint64_t>(call.destination)));
  return copy;
}

void hand_to_writer(CopyCall copy) {
  const std::lock_guard lock(writer.mutex);
  writer.pending.push_back(std::move(copy));
}

void hand_to_writer(contract::RuntimeFunction function, std::uint64_t start_ns, std::uint64_t end_ns,
                    std::uint32_t correlation_id) {
  const CudaApiCall call{start_ns,      end_ns,        ApiDomain::Runtime, runtime_callback_id(function),
                         this_thread(), correlation_id};
  const std::lock_guard lock(writer.mutex);
  writer.calls.push_back(call);
}

std::int64_t call_row_ns(std::uint64_t profiler_ns) {
  return relative_ns(profiler_ns);
}

void store(std::vector<CopyCall> copies, const std::vector<CudaApiCall>& calls) {
  store_api_calls(calls, call_row_ns, interposed_function_name);
  if (copies.empty()) {
    return;
  }
  if (host().mode == Mode::Summary) {
    copies = merge_copy_runs(std::move(copies), kRunGapNs);
  }
  std::vector<std::vector<SqlValue>> rows;
  rows.reserve(copies.size());
  for (const CopyCall& copy : copies) { // no runtime correlation id: the call is the runtime's
    rows.push_back(copy_row(copy.copy, classifier->classify(copy.copy), relative_ns(copy.copy.start_ns),
                            relative_ns(copy.copy.end_ns), copy.call_id, copy.gpu_timed));
  }
  host().store_rows(std::string(kInsertCopySql), std::move(rows));
}

// Takes what the threads handed over and stores it, with `lock` released meanwhile.
void store_pending(std::unique_lock<std::mutex>& lock) {
  std::vector<CopyCall> copies;
  std::vector<CudaApiCall> calls;
  copies.swap(writer.pending);
  calls.swap(writer.calls);
  lock.unlock();
  store(std::move(copies), calls);
  lock.lock();
}

// Makes and stores the rows off the copying threads, every kStorePeriod and at the end.
void write_copies() {
  std::unique_lock lock(writer.mutex);
  while (!writer.stopping) {
    writer.changed.wait_for(lock, kStorePeriod, [] { return writer.stopping; });
    store_pending(lock);
  }
}

// A copy cannot start before its call, nor a synchronous one end after it, except from pageable
// memory to the device, where the runtime may return once the bytes are staged. The events' times
// are good to a few microseconds (device_spans.hpp), the call's to less.
std::pair<std::uint64_t, std::uint64_t> within_call(const CudaCopy& copy, bool synchronous,
                                                    std::uint64_t call_start, std::uint64_t call_end,
                                                    std::uint64_t start, std::uint64_t end) {
  start = std::max(start, call_start);
  const bool may_outlive_call =
      copy.src_kind == MemoryKind::Pageable && copy.direction == CopyDirection::HtoD;
  if (synchronous && !may_outlive_call) {
    end = std::min(end, call_end);
  }
  return {start, std::max(start, end)};
}

// Whether the stream is being captured into a CUDA graph: a copy queued there runs only when the
// graph is launched, which these calls do not see.
bool capturing(const void* stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return cuStreamIsCapturing(static_cast<CUstream>(const_cast<void*>(stream)), &status) == CUDA_SUCCESS &&
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

void copy_begin(const contract::RuntimeCopyCall& call) noexcept {
  const std::uint64_t now = host().now_ns();
  if (call.capture_active && capturing(call.stream)) {
    this_copy = {now, false, true};
    return;
  }
  this_copy = {now, call.bytes >= kAlwaysTimedBytes || now - last_timed_ns >= kTimingGapNs, false};
  if (this_copy.timed) {
    last_timed_ns = now;
    begin_stream_span(call.stream);
  }
}

void copy_end(const contract::RuntimeCopyCall& call, bool accepted) noexcept {
  if (this_copy.captured) {
    return;
  }
  if (!accepted || call.bytes == 0) {
    if (this_copy.timed) {
      end_stream_span(call.stream, nullptr); // gives the event back
    }
    return;
  }
  const std::uint64_t call_start = this_copy.call_start_ns;
  const std::uint64_t call_end = host().now_ns();
  CopyCall made{describe(call), current_mpi_call(), false, this_thread(), host().phase()};
  if (host().mode == Mode::Trace) {
    made.copy.correlation_id = next_correlation_id.fetch_add(1, std::memory_order_relaxed);
    hand_to_writer(call.function, call_start, call_end, made.copy.correlation_id);
  }
  if (!this_copy.timed) {
    made.copy.start_ns = call_start;
    made.copy.end_ns = call_end;
    made.copy.stream = stream_id_of(call.stream);
    hand_to_writer(std::move(made));
    return;
  }
  end_stream_span(call.stream, [made, synchronous = !call.asynchronous, call_start, call_end](
                                   std::uint32_t stream, std::int64_t start_ns, std::int64_t end_ns) mutable {
    const auto [start, end] =
        within_call(made.copy, synchronous, call_start, call_end, static_cast<std::uint64_t>(start_ns),
                    static_cast<std::uint64_t>(end_ns));
    made.copy.start_ns = start;
    made.copy.end_ns = end;
    made.copy.stream = stream;
    made.gpu_timed = true;
    hand_to_writer(std::move(made));
  });
}

void call_ended(contract::RuntimeFunction function, std::uint64_t start_ns) noexcept {
  hand_to_writer(function, start_ns, host().now_ns(),
                 next_correlation_id.fetch_add(1, std::memory_order_relaxed));
}

std::uint64_t now_ns() noexcept {
  return host().now_ns();
}

void ipc_exported(const void* address, const void* handle, std::uint64_t start_ns) noexcept {
  ipc->handle_exported(ipc_call_ended(start_ns, reinterpret_cast<std::uint64_t>(address)), handle);
}

void ipc_opened(const void* address, const void* handle, std::uint64_t start_ns) noexcept {
  const auto mapped = reinterpret_cast<std::uint64_t>(address);
  ipc->handle_opened(ipc_call_ended(start_ns, mapped), handle, allocation_bytes(mapped));
}

void ipc_closed(const void* address, std::uint64_t start_ns) noexcept {
  ipc->handle_closed(ipc_call_ended(start_ns, reinterpret_cast<std::uint64_t>(address)));
}

} // namespace

contract::RuntimeCallHooks runtime_copy_hooks(const CopyPathClassifier& copy_classifier,
                                              IpcTracker& tracker) {
  classifier = &copy_classifier;
  ipc = &tracker;
  writer.thread = std::thread(write_copies);
  // After an allocation or free the memory caches (buffer_location_cache.hpp) ask the driver again.
  return {.now_ns = now_ns,
          .copy_begin = copy_begin,
          .copy_end = copy_end,
          .ipc_exported = ipc_exported,
          .ipc_opened = ipc_opened,
          .ipc_closed = ipc_closed,
          .memory_changed = forget_buffer_locations,
          .call_ended = host().mode == Mode::Trace ? call_ended : nullptr};
}

void store_runtime_copies() {
  {
    const std::lock_guard lock(writer.mutex);
    writer.stopping = true;
  }
  writer.changed.notify_all();
  if (writer.thread.joinable()) {
    writer.thread.join();
  }
  std::unique_lock lock(writer.mutex);
  store_pending(lock);
  lock.unlock();
  store_ipc_events(*ipc);
}

} // namespace commlens::cuda
