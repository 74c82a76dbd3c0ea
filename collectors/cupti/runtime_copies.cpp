#include "runtime_copies.hpp"

#include "api_callbacks.hpp"
#include "buffer_location_cache.hpp"
#include "device_spans.hpp"
#include "plugin_context.hpp"

#include <cuda.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <vector>

namespace commlens::cuda {

namespace {

constexpr std::size_t kRowsPerBatch = 1024;

const CopyPathClassifier* classifier = nullptr;
IpcTracker* ipc = nullptr;
std::mutex rows_mutex;
std::vector<std::vector<SqlValue>> copy_rows;

// One end of a copy as CUPTI's memcpy records describe it: pageable or pinned host memory, device
// or managed memory, and the device it is on (the copy's device for host memory).
struct CopyEnd {
  MemoryKind kind = MemoryKind::Pageable;
  std::uint32_t device = 0;
};

CopyEnd copy_end_of(const void* pointer, std::uint32_t copy_device) {
  unsigned int memory_type = 0;
  int device = -1;
  int managed = 0;
  std::array attributes{CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                        CU_POINTER_ATTRIBUTE_IS_MANAGED};
  std::array<void*, 3> values{&memory_type, &device, &managed};
  // Memory the driver does not know (pageable host memory) leaves the values as they are.
  if (cuPointerGetAttributes(attributes.size(), attributes.data(), values.data(),
                             reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS) {
    return {MemoryKind::Pageable, copy_device};
  }
  if (managed != 0) {
    return {MemoryKind::Managed, device >= 0 ? static_cast<std::uint32_t>(device) : copy_device};
  }
  if (memory_type == CU_MEMORYTYPE_DEVICE) {
    return {MemoryKind::Device, device >= 0 ? static_cast<std::uint32_t>(device) : copy_device};
  }
  return {memory_type == CU_MEMORYTYPE_HOST ? MemoryKind::Pinned : MemoryKind::Pageable, copy_device};
}

bool on_host(MemoryKind kind) {
  return kind == MemoryKind::Pageable || kind == MemoryKind::Pinned;
}

CopyDirection direction_of(const CopyEnd& source, const CopyEnd& destination) {
  if (on_host(source.kind)) {
    return on_host(destination.kind) ? CopyDirection::HtoH : CopyDirection::HtoD;
  }
  if (on_host(destination.kind)) {
    return CopyDirection::DtoH;
  }
  return source.device == destination.device ? CopyDirection::DtoD : CopyDirection::PtoP;
}

CudaCopy describe(const contract::RuntimeCopyCall& call) {
  CUdevice current = 0;
  const std::uint32_t device = cuCtxGetDevice(&current) == CUDA_SUCCESS ? static_cast<std::uint32_t>(current) : 0;
  CopyEnd source = copy_end_of(call.source, device);
  CopyEnd destination = copy_end_of(call.destination, device);
  if (call.source_device >= 0) { // cudaMemcpyPeer names the devices
    source.device = static_cast<std::uint32_t>(call.source_device);
  }
  if (call.destination_device >= 0) {
    destination.device = static_cast<std::uint32_t>(call.destination_device);
  }
  CudaCopy copy;
  copy.device = device;
  copy.src_device = source.device;
  copy.dst_device = destination.device;
  copy.src_kind = source.kind;
  copy.dst_kind = destination.kind;
  copy.bytes = call.bytes;
  copy.direction = direction_of(source, destination);
  copy.touches_ipc_mapping = ipc->has_mappings() && (ipc->is_mapped(reinterpret_cast<std::uint64_t>(call.source)) ||
                                                     ipc->is_mapped(reinterpret_cast<std::uint64_t>(call.destination)));
  return copy;
}

void store_rows_now(std::vector<std::vector<SqlValue>> rows) {
  if (!rows.empty()) {
    host().store_rows(
        "INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_device, dst_device, src_kind, dst_kind, "
        "bytes, stream, copy_kind, path, link, mpi_call_id, correlation_id, runtime_correlation_id) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        std::move(rows));
  }
}

// The row of a completed copy; no correlation ids (no CUPTI). Under device_spans' lock.
void add_row(const CudaCopy& copy, std::uint64_t call_id, std::uint32_t stream, std::int64_t start_ns,
             std::int64_t end_ns) {
  const CopyClassification classified = classifier->classify(copy);
  const char* link = peer_link_name(classified.link);
  std::vector<SqlValue> row{std::int64_t{host().run_rank},
                            relative_ns(static_cast<std::uint64_t>(start_ns)),
                            relative_ns(static_cast<std::uint64_t>(end_ns)),
                            std::int64_t{copy.device},
                            std::int64_t{copy.src_device},
                            std::int64_t{copy.dst_device},
                            std::string(memory_kind_name(copy.src_kind)),
                            std::string(memory_kind_name(copy.dst_kind)),
                            static_cast<std::int64_t>(copy.bytes),
                            std::int64_t{stream},
                            std::string(copy_direction_name(copy.direction)),
                            std::string(copy_path_name(classified.path)),
                            link != nullptr ? SqlValue{std::string(link)} : SqlValue{},
                            call_id != 0 ? SqlValue{static_cast<std::int64_t>(call_id)} : SqlValue{},
                            std::int64_t{0},
                            SqlValue{}};
  std::vector<std::vector<SqlValue>> full;
  {
    const std::lock_guard lock(rows_mutex);
    copy_rows.push_back(std::move(row));
    if (copy_rows.size() >= kRowsPerBatch) {
      full.swap(copy_rows);
    }
  }
  store_rows_now(std::move(full));
}

thread_local std::uint64_t copy_call_start_ns = 0;

void copy_begin(const contract::RuntimeCopyCall& call) noexcept {
  copy_call_start_ns = host().now_ns();
  begin_stream_span(call.stream);
}

// The events' times are good to a few microseconds (device_spans.hpp), the call's own to less: a
// copy cannot start before its call, nor a synchronous one end after it, except from pageable
// memory to the device, where the runtime may return once the bytes are staged.
std::pair<std::int64_t, std::int64_t> within_call(const CudaCopy& copy, bool synchronous, std::int64_t call_start,
                                                  std::int64_t call_end, std::int64_t start_ns, std::int64_t end_ns) {
  start_ns = std::max(start_ns, call_start);
  const bool may_outlive_call = copy.src_kind == MemoryKind::Pageable && copy.direction == CopyDirection::HtoD;
  if (synchronous && !may_outlive_call) {
    end_ns = std::min(end_ns, call_end);
  }
  return {start_ns, std::max(start_ns, end_ns)};
}

void copy_end(const contract::RuntimeCopyCall& call, bool accepted) noexcept {
  if (!accepted || call.bytes == 0) {
    end_stream_span(call.stream, nullptr); // gives the event back
    return;
  }
  const auto call_start = static_cast<std::int64_t>(copy_call_start_ns);
  const auto call_end = static_cast<std::int64_t>(host().now_ns());
  const CudaCopy copy = describe(call);
  end_stream_span(call.stream, [copy, call_id = current_mpi_call(), synchronous = !call.asynchronous, call_start,
                                call_end](std::uint32_t stream, std::int64_t start_ns, std::int64_t end_ns) {
    const auto [start, end] = within_call(copy, synchronous, call_start, call_end, start_ns, end_ns);
    add_row(copy, call_id, stream, start, end);
  });
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

contract::RuntimeCallHooks runtime_copy_hooks(const CopyPathClassifier& copy_classifier, IpcTracker& tracker) {
  classifier = &copy_classifier;
  ipc = &tracker;
  return {copy_begin, copy_end, ipc_exported, ipc_opened, ipc_closed, forget_buffer_locations};
}

void store_runtime_copies() {
  std::vector<std::vector<SqlValue>> rows;
  {
    const std::lock_guard lock(rows_mutex);
    rows.swap(copy_rows);
  }
  store_rows_now(std::move(rows));
  if (auto ipc_rows = ipc->take_rows(); !ipc_rows.empty()) {
    host().store_rows("INSERT INTO ipc_events (rank, event, start_ns, end_ns, device, address, bytes, handle, "
                      "open_number, mpi_call_id) VALUES (?,?,?,?,?,?,?,?,?,?)",
                      std::move(ipc_rows));
  }
}

} // namespace commlens::cuda
