#include "activity_records.hpp"

#include "commlens/profiler/nvtx_domains.hpp"

#include <cupti.h>

namespace commlens::cuda {

namespace {

MemoryKind memory_kind(unsigned kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
    return MemoryKind::Pageable;
  case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
    return MemoryKind::Pinned;
  case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
  case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
    return MemoryKind::Device;
  case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
    return MemoryKind::Array;
  case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
  case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
    return MemoryKind::Managed;
  default:
    return MemoryKind::Unknown;
  }
}

CopyDirection direction(std::uint8_t kind) {
  // CUPTI_ACTIVITY_MEMCPY_KIND_HTOD (1) .. PTOP (10) map in order; UNKNOWN (0) and others do not.
  return kind >= CUPTI_ACTIVITY_MEMCPY_KIND_HTOD && kind <= CUPTI_ACTIVITY_MEMCPY_KIND_PTOP
             ? static_cast<CopyDirection>(kind - CUPTI_ACTIVITY_MEMCPY_KIND_HTOD)
             : CopyDirection::Unknown;
}

CudaCopy from_memcpy(const CUpti_ActivityMemcpy6& r) {
  CudaCopy copy;
  copy.start_ns = r.start;
  copy.end_ns = r.end;
  copy.device = copy.src_device = copy.dst_device = r.deviceId;
  copy.src_kind = memory_kind(r.srcKind);
  copy.dst_kind = memory_kind(r.dstKind);
  copy.bytes = r.bytes;
  copy.stream = r.streamId;
  copy.direction = direction(r.copyKind);
  copy.correlation_id = r.correlationId;
  copy.runtime_correlation_id = r.runtimeCorrelationId;
  return copy;
}

CudaCopy from_peer_memcpy(const CUpti_ActivityMemcpyPtoP4& r) {
  CudaCopy copy;
  copy.start_ns = r.start;
  copy.end_ns = r.end;
  copy.device = r.deviceId;
  copy.src_device = r.srcDeviceId;
  copy.dst_device = r.dstDeviceId;
  copy.src_kind = memory_kind(r.srcKind);
  copy.dst_kind = memory_kind(r.dstKind);
  copy.bytes = r.bytes;
  copy.stream = r.streamId;
  copy.direction = direction(r.copyKind);
  copy.correlation_id = r.correlationId;
  return copy;
}

bool from_unified_memory(const CUpti_ActivityUnifiedMemoryCounter3& r, CudaCopy& copy) {
  switch (r.counterKind) {
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
    copy.direction = CopyDirection::HtoD;
    copy.src_kind = MemoryKind::Managed;
    copy.dst_kind = MemoryKind::Device;
    break;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
    copy.direction = CopyDirection::DtoH;
    copy.src_kind = MemoryKind::Device;
    copy.dst_kind = MemoryKind::Managed;
    break;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD:
    copy.direction = CopyDirection::DtoD;
    copy.src_kind = copy.dst_kind = MemoryKind::Managed;
    break;
  default:
    return false; // faults and thrashing counters are not copies
  }
  copy.start_ns = r.start;
  copy.end_ns = r.end;
  copy.device = copy.dst_device = r.dstId;
  copy.src_device = r.srcId;
  copy.bytes = r.value;
  copy.stream = r.streamId;
  copy.managed_migration = true;
  return true;
}

CudaKernel from_kernel(const CUpti_ActivityKernel10& r) {
  return {r.start, r.end, r.deviceId, r.streamId, r.name != nullptr ? r.name : "", r.correlationId};
}

CudaMemset from_memset(const CUpti_ActivityMemset4& r) {
  return {r.start, r.end,          r.deviceId, r.streamId, r.bytes, memory_kind(r.memoryKind),
          r.value, r.correlationId};
}

std::optional<std::uint32_t> valid_id(std::uint32_t id) {
  return id != CUPTI_SYNCHRONIZATION_INVALID_VALUE ? std::optional(id) : std::nullopt;
}

CudaSynchronization from_synchronization(const CUpti_ActivitySynchronization2& r) {
  const auto kind = r.type >= CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE &&
                            r.type <= CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
                        ? static_cast<SyncKind>(r.type)
                        : SyncKind::Unknown;
  return {r.start, r.end, kind, r.contextId, valid_id(r.streamId), valid_id(r.cudaEventId), r.correlationId};
}

CudaApiCall from_api(const CUpti_ActivityAPI& r) {
  return {r.start, r.end,      r.kind == CUPTI_ACTIVITY_KIND_DRIVER ? ApiDomain::Driver : ApiDomain::Runtime,
          r.cbid,  r.threadId, r.correlationId};
}

ExternalKind external_kind(CUpti_ExternalCorrelationKind kind) {
  switch (kind) {
  case CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0:
    return ExternalKind::MpiCall;
  case CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1:
    return ExternalKind::IpcCopy;
  default:
    return ExternalKind::Other;
  }
}

bool is_library_domain(const char* domain) {
  return domain != nullptr && is_library_nvtx_domain(domain);
}

} // namespace

void ActivityConverter::convert(const CUpti_Activity* record, ConvertedRecords& out,
                                CorrelationTable& correlations) {
  switch (record->kind) {
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    out.copies.push_back(from_memcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record)));
    break;
  case CUPTI_ACTIVITY_KIND_MEMCPY2:
    out.copies.push_back(from_peer_memcpy(*reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record)));
    break;
  case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER: {
    CudaCopy copy;
    if (from_unified_memory(*reinterpret_cast<const CUpti_ActivityUnifiedMemoryCounter3*>(record), copy)) {
      out.copies.push_back(copy);
    }
    break;
  }
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    out.kernels.push_back(from_kernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(record)));
    break;
  case CUPTI_ACTIVITY_KIND_MEMSET:
    out.memsets.push_back(from_memset(*reinterpret_cast<const CUpti_ActivityMemset4*>(record)));
    break;
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    out.synchronizations.push_back(
        from_synchronization(*reinterpret_cast<const CUpti_ActivitySynchronization2*>(record)));
    break;
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: {
    const auto& r = *reinterpret_cast<const CUpti_ActivityAPI*>(record);
    if (keep_api_calls_ && (r.start != 0 || r.end != 0)) { // both 0: CUPTI could not time the call
      out.api_calls.push_back(from_api(r));
    }
    break;
  }
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
    const auto& r = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
    correlations.add(external_kind(r.externalKind), r.correlationId, r.externalId);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MARKER: {
    const auto& r = *reinterpret_cast<const CUpti_ActivityMarker2*>(record);
    if (is_library_domain(r.domain)) {
      break;
    }
    if (r.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
      NvtxRange range;
      range.start_ns = r.timestamp;
      range.name = r.name != nullptr ? r.name : "";
      if (r.domain != nullptr) {
        range.domain = r.domain;
      }
      open_markers_[r.id] = std::move(range);
    } else if (r.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
      if (const auto open = open_markers_.find(r.id); open != open_markers_.end()) {
        open->second.end_ns = r.timestamp;
        out.nvtx_ranges.push_back(std::move(open->second));
        open_markers_.erase(open);
      }
    }
    break;
  }
  default:
    break;
  }
}

} // namespace commlens::cuda
