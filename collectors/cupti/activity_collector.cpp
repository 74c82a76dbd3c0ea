#include "activity_collector.hpp"

#include "activity_records.hpp"
#include "api_call_rows.hpp"
#include "api_record_selection.hpp"
#include "copy_rows.hpp"
#include "device_spans.hpp"
#include "ipc_tracker.hpp"
#include "kernel_recording.hpp"
#include "plugin_context.hpp"

#include <cupti.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace commlens::cuda {

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kBufferAlignment = 8;
constexpr std::uint32_t kFlushPeriodMs = 1000;

const CopyPathClassifier* classifier = nullptr;
IpcTracker* ipc = nullptr;
std::mutex processing_mutex;
ActivityConverter converter;
CorrelationTable correlations;
ConvertedRecords waiting; // records whose API call's correlation had not arrived yet
// Profiler time minus CUPTI time, measured as each buffer is processed. CUPTI's own timestamps are
// moved onto the profiler's clock here rather than asking CUPTI to call the profiler's clock for
// every timestamp: that callback cost about 3 µs a kernel launch (docs/performance.md).
std::atomic<std::int64_t> clock_offset_ns{0};

// CUPTI's clock and the profiler's read back to back: the pair read closest together wins.
std::int64_t measure_clock_offset() {
  std::int64_t best_offset = 0;
  std::uint64_t best_gap = UINT64_MAX;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::uint64_t before = host().now_ns();
    std::uint64_t cupti_ns = 0;
    cuptiGetTimestamp(&cupti_ns);
    const std::uint64_t after = host().now_ns();
    if (after - before < best_gap) {
      best_gap = after - before;
      best_offset =
          static_cast<std::int64_t>(before + (after - before) / 2) - static_cast<std::int64_t>(cupti_ns);
    }
  }
  return best_offset;
}

// Rows store times since MPI_Init on the profiler's clock.
std::int64_t row_ns(std::uint64_t cupti_ns) {
  return relative_ns(static_cast<std::uint64_t>(static_cast<std::int64_t>(cupti_ns) +
                                                clock_offset_ns.load(std::memory_order_relaxed)));
}

SqlValue call_id_value(std::uint64_t call_id) {
  return call_id != 0 ? SqlValue{static_cast<std::int64_t>(call_id)} : SqlValue{};
}

std::vector<SqlValue> cupti_copy_row(const CudaCopy& copy) {
  CudaCopy marked = copy;
  marked.touches_ipc_mapping =
      correlations.is_ipc_copy(copy.correlation_id) || correlations.is_ipc_copy(copy.runtime_correlation_id);
  return copy_row(copy, classifier->classify(marked), row_ns(copy.start_ns), row_ns(copy.end_ns),
                  copy.managed_migration ? 0 : call_of(correlations, copy), true);
}

bool is_nccl_kernel(const std::string& name) {
  return name.find("ncclDevKernel") != std::string::npos || name.find("ncclKernel") != std::string::npos;
}

// The kernel's call through CUPTI's correlation, else, for NCCL's kernels, the NCCL call whose GPU
// span on the kernel's stream holds it (device_spans.hpp says when that is needed).
std::uint64_t kernel_call_id(const CudaKernel& kernel) {
  const std::uint64_t linked = call_of(correlations, kernel);
  if (linked != 0 || !is_nccl_kernel(kernel.name)) {
    return linked;
  }
  const std::int64_t offset = clock_offset_ns.load(std::memory_order_relaxed);
  return kernel_call(kernel.stream, static_cast<std::int64_t>(kernel.start_ns) + offset,
                     static_cast<std::int64_t>(kernel.end_ns) + offset);
}

std::vector<SqlValue> kernel_row(const CudaKernel& kernel) {
  return {std::int64_t{host().run_rank},
          row_ns(kernel.start_ns),
          row_ns(kernel.end_ns),
          std::int64_t{kernel.device},
          std::int64_t{kernel.stream},
          kernel.name,
          call_id_value(kernel_call_id(kernel)),
          std::int64_t{kernel.correlation_id}};
}

std::vector<SqlValue> memset_row(const CudaMemset& memset) {
  return {std::int64_t{host().run_rank},
          row_ns(memset.start_ns),
          row_ns(memset.end_ns),
          std::int64_t{memset.device},
          std::int64_t{memset.stream},
          static_cast<std::int64_t>(memset.bytes),
          std::string(memory_kind_name(memset.memory_kind)),
          std::int64_t{memset.value},
          call_id_value(call_of(correlations, memset)),
          std::int64_t{memset.correlation_id}};
}

SqlValue optional_id(const std::optional<std::uint32_t>& id) {
  return id ? SqlValue{std::int64_t{*id}} : SqlValue{};
}

std::vector<SqlValue> synchronization_row(const CudaSynchronization& sync) {
  return {std::int64_t{host().run_rank},
          row_ns(sync.start_ns),
          row_ns(sync.end_ns),
          std::string(sync_kind_name(sync.kind)),
          std::int64_t{sync.context},
          optional_id(sync.stream),
          optional_id(sync.event),
          call_id_value(call_of(correlations, sync)),
          std::int64_t{sync.correlation_id}};
}

std::vector<SqlValue> nvtx_row(const NvtxRange& range) {
  return {std::int64_t{host().run_rank}, row_ns(range.start_ns), row_ns(range.end_ns),
          range.domain ? SqlValue{*range.domain} : SqlValue{}, range.name};
}

// The records ready in this buffer (correlation_table.hpp: take_ready) as rows of their table.
template <class Record, class MakeRow>
void store(std::vector<Record>& fresh, std::vector<Record>& parked, const char* sql, MakeRow make_row,
           bool final) {
  std::vector<std::vector<SqlValue>> rows;
  for (const Record& record : take_ready(fresh, parked, correlations, final)) {
    rows.push_back(make_row(record));
  }
  if (!rows.empty()) {
    host().store_rows(sql, std::move(rows));
  }
}

void store_converted(ConvertedRecords& fresh, bool final) {
  ConvertedRecords parked = std::move(waiting);
  store(fresh.copies, parked.copies, kInsertCopySql.data(), cupti_copy_row, final);
  store(
      fresh.kernels, parked.kernels,
      "INSERT INTO cuda_kernels (rank, start_ns, end_ns, device, stream, name, mpi_call_id, correlation_id) "
      "VALUES (?,?,?,?,?,?,?,?)",
      kernel_row, final);
  store(fresh.memsets, parked.memsets,
        "INSERT INTO cuda_memsets (rank, start_ns, end_ns, device, stream, bytes, memory_kind, value, "
        "mpi_call_id, correlation_id) VALUES (?,?,?,?,?,?,?,?,?,?)",
        memset_row, final);
  store(
      fresh.synchronizations, parked.synchronizations,
      "INSERT INTO cuda_synchronizations (rank, start_ns, end_ns, kind, context, stream, event, mpi_call_id, "
      "correlation_id) VALUES (?,?,?,?,?,?,?,?,?)",
      synchronization_row, final);
  waiting = std::move(parked); // what is still unlinked (NVTX ranges and API calls never wait)
  store_api_calls(fresh.api_calls, row_ns, api_function_name);
  if (!fresh.nvtx_ranges.empty()) {
    std::vector<std::vector<SqlValue>> rows;
    for (const NvtxRange& range : fresh.nvtx_ranges) {
      rows.push_back(nvtx_row(range));
    }
    host().store_rows("INSERT INTO nvtx_ranges (rank, start_ns, end_ns, domain, name) VALUES (?,?,?,?,?)",
                      std::move(rows));
  }
  store_ipc_events(*ipc);
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void process_buffer(std::uint8_t* buffer, std::size_t valid_bytes, bool final) {
  const std::lock_guard lock(processing_mutex);
  clock_offset_ns.store(measure_clock_offset(), std::memory_order_relaxed);
  ConvertedRecords fresh;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    converter.convert(record, fresh, correlations);
  }
  store_converted(fresh, final);
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
  if (buffer != nullptr && valid > 0) {
    process_buffer(buffer, valid, false);
  }
  std::free(buffer);
}

// Managed-memory migrations need a per-device configuration before the kind is enabled.
bool enable_unified_memory_counters() {
  int devices = 0;
  if (cuDeviceGetCount(&devices) != CUDA_SUCCESS) {
    return false;
  }
  std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> configs;
  for (int device = 0; device < devices; ++device) {
    for (const auto kind : {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
                            CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
                            CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD}) {
      configs.push_back({CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE, kind,
                         static_cast<std::uint32_t>(device), 1});
    }
  }
  return cupti_ok(cuptiActivityConfigureUnifiedMemoryCounter(configs.data(),
                                                             static_cast<std::uint32_t>(configs.size())),
                  "cuptiActivityConfigureUnifiedMemoryCounter") &&
         cupti_ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER),
                  "cuptiActivityEnable(UNIFIED_MEMORY_COUNTER)");
}

} // namespace

bool start_activity_collection(const CopyPathClassifier& copy_classifier, IpcTracker& ipc_tracker,
                               const KernelSchedule& kernels, bool user_nvtx) {
  classifier = &copy_classifier;
  ipc = &ipc_tracker;
  clock_offset_ns.store(measure_clock_offset(), std::memory_order_relaxed);
  if (!cupti_ok(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                "cuptiActivityRegisterCallbacks")) {
    return false;
  }
  for (const auto kind :
       {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION}) {
    if (!cupti_ok(cuptiActivityEnable(kind), "cuptiActivityEnable")) {
      return false;
    }
  }
  // CUPTI links external correlation ids through the API records; in trace mode they are also
  // the cuda_api_calls rows, whose threads are named by Linux thread id (thread_numbers.hpp).
  if (host().mode == Mode::Trace) {
    converter.keep_api_calls(
        cupti_ok(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType"));
  }
  if (!set_api_records(ApiRecords::Copies, true) || !start_kernel_recording(kernels)) {
    return false;
  }
  if (user_nvtx) {
    cupti_ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER), "cuptiActivityEnable(MARKER)");
  }
  enable_unified_memory_counters(); // optional: explicit copies are still classified without it
  return cupti_ok(cuptiActivityFlushPeriod(kFlushPeriodMs), "cuptiActivityFlushPeriod");
}

void finish_activity_collection() {
  finish_kernel_recording();
  cupti_ok(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  const std::lock_guard lock(processing_mutex);
  ConvertedRecords nothing_new;
  store_converted(nothing_new, true);
}

} // namespace commlens::cuda
