#include "api_callbacks.hpp"

#include "buffer_location_cache.hpp"
#include "external_correlation.hpp"
#include "nvtx_steps.hpp"
#include "plugin_context.hpp"

#include <cuda.h>
#include <cupti.h>

#include <algorithm>

namespace commlens::cuda {

namespace {

CUpti_SubscriberHandle subscriber = nullptr;
IpcTracker* tracker = nullptr;

// Per thread: when the current IPC call began, whether a runtime IPC call is in progress (its
// driver call inside is then not recorded twice) and whether a memcpy pushed the ipc marker.
thread_local std::uint64_t ipc_call_start_ns = 0;
thread_local int runtime_ipc_depth = 0;
thread_local bool ipc_marker_pushed = false;

IpcCall finished_call(std::uint64_t address) {
  return ipc_call_ended(ipc_call_start_ns, address);
}

void on_ipc_call(const CUpti_CallbackData& data, CUpti_CallbackDomain domain, CUpti_CallbackId id) {
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (data.callbackSite == CUPTI_API_ENTER) {
    if (runtime) {
      ++runtime_ipc_depth;
    }
    if (runtime || runtime_ipc_depth == 0) {
      ipc_call_start_ns = host().now_ns();
    }
    return;
  }
  if (runtime) {
    --runtime_ipc_depth;
  } else if (runtime_ipc_depth > 0) {
    return;
  }
  // A refused call made no handle and no mapping (and left its output unset): not an event.
  const bool succeeded = data.functionReturnValue == nullptr ||
                         (runtime ? *static_cast<const cudaError_t*>(data.functionReturnValue) == cudaSuccess
                                  : *static_cast<const CUresult*>(data.functionReturnValue) == CUDA_SUCCESS);
  if (!succeeded) {
    return;
  }
  if (runtime && id == CUPTI_RUNTIME_TRACE_CBID_cudaIpcGetMemHandle_v4010) {
    const auto* p = static_cast<const cudaIpcGetMemHandle_v4010_params*>(data.functionParams);
    tracker->handle_exported(finished_call(reinterpret_cast<std::uint64_t>(p->devPtr)), p->handle);
  } else if (runtime && id == CUPTI_RUNTIME_TRACE_CBID_cudaIpcOpenMemHandle_v4010) {
    const auto* p = static_cast<const cudaIpcOpenMemHandle_v4010_params*>(data.functionParams);
    const auto address = reinterpret_cast<std::uint64_t>(*p->devPtr);
    tracker->handle_opened(finished_call(address), &p->handle, allocation_bytes(address));
  } else if (runtime && id == CUPTI_RUNTIME_TRACE_CBID_cudaIpcCloseMemHandle_v4010) {
    const auto* p = static_cast<const cudaIpcCloseMemHandle_v4010_params*>(data.functionParams);
    tracker->handle_closed(finished_call(reinterpret_cast<std::uint64_t>(p->devPtr)));
  } else if (!runtime && id == CUPTI_DRIVER_TRACE_CBID_cuIpcGetMemHandle) {
    const auto* p = static_cast<const cuIpcGetMemHandle_params*>(data.functionParams);
    tracker->handle_exported(finished_call(p->dptr), p->pHandle);
  } else if (!runtime && id == CUPTI_DRIVER_TRACE_CBID_cuIpcOpenMemHandle_v2) {
    const auto* p = static_cast<const cuIpcOpenMemHandle_v2_params*>(data.functionParams);
    tracker->handle_opened(finished_call(*p->pdptr), &p->handle, allocation_bytes(*p->pdptr));
  } else if (!runtime && id == CUPTI_DRIVER_TRACE_CBID_cuIpcCloseMemHandle) {
    const auto* p = static_cast<const cuIpcCloseMemHandle_params*>(data.functionParams);
    tracker->handle_closed(finished_call(p->dptr));
  }
}

// Source and destination of the runtime memcpy calls whose parameters start with (dst, src).
std::pair<const void*, const void*> copy_ends(const CUpti_CallbackData& data, CUpti_CallbackId id) {
  if (id == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000 ||
      id == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000) {
    const auto* p = static_cast<const cudaMemcpyPeer_v4000_params*>(data.functionParams);
    return {p->dst, p->src};
  }
  const auto* p = static_cast<const cudaMemcpy_v3020_params*>(data.functionParams);
  return {p->dst, p->src};
}

void on_memcpy_call(const CUpti_CallbackData& data, CUpti_CallbackId id) {
  if (data.callbackSite == CUPTI_API_EXIT) {
    if (ipc_marker_pushed) {
      pop_ipc_copy_marker();
      ipc_marker_pushed = false;
    }
    return;
  }
  if (!tracker->has_mappings()) {
    return;
  }
  const auto [dst, src] = copy_ends(data, id);
  if (tracker->is_mapped(reinterpret_cast<std::uint64_t>(dst)) ||
      tracker->is_mapped(reinterpret_cast<std::uint64_t>(src))) {
    ipc_marker_pushed = push_ipc_copy_marker();
  }
}

bool is_memcpy_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id) {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
         (id == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020 ||
          id == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020 ||
          id == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000 ||
          id == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000 ||
          id == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000 ||
          id == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000);
}

// Allocations and frees of GPU-visible memory, runtime and driver (the runtime's calls reach the
// driver too; a second forget is harmless). After one, an address may stand for other memory.
constexpr CUpti_CallbackId kRuntimeAllocationCallbacks[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc3D_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaHostRegister_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaHostUnregister_v4000};
constexpr CUpti_CallbackId kDriverAllocationCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemMap,
    CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemHostUnregister,
    CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
    CUPTI_DRIVER_TRACE_CBID_cuMemAddressFree};

bool is_allocation_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id) {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API
             ? std::ranges::find(kRuntimeAllocationCallbacks, id) != std::end(kRuntimeAllocationCallbacks)
             : std::ranges::find(kDriverAllocationCallbacks, id) != std::end(kDriverAllocationCallbacks);
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* info) {
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    on_nvtx_step_callback(id, info);
    return;
  }
  const auto& data = *static_cast<const CUpti_CallbackData*>(info);
  if (is_memcpy_callback(domain, id)) {
    on_memcpy_call(data, id);
  } else if (is_allocation_callback(domain, id)) {
    if (data.callbackSite == CUPTI_API_EXIT) {
      forget_buffer_locations();
    }
  } else {
    on_ipc_call(data, domain, id);
  }
}

constexpr CUpti_CallbackId kRuntimeCallbacks[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaIpcGetMemHandle_v4010,   CUPTI_RUNTIME_TRACE_CBID_cudaIpcOpenMemHandle_v4010,
    CUPTI_RUNTIME_TRACE_CBID_cudaIpcCloseMemHandle_v4010, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,       CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,  CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000};
constexpr CUpti_CallbackId kDriverCallbacks[] = {CUPTI_DRIVER_TRACE_CBID_cuIpcGetMemHandle,
                                                 CUPTI_DRIVER_TRACE_CBID_cuIpcOpenMemHandle_v2,
                                                 CUPTI_DRIVER_TRACE_CBID_cuIpcCloseMemHandle};

template <std::size_t N> bool enable(CUpti_CallbackDomain domain, const CUpti_CallbackId (&ids)[N]) {
  return std::ranges::all_of(ids, [&](CUpti_CallbackId id) {
    return cupti_ok(cuptiEnableCallback(1, subscriber, domain, id), "cuptiEnableCallback");
  });
}

} // namespace

IpcCall ipc_call_ended(std::uint64_t start_ns, std::uint64_t address) {
  int device = -1;
  CUdevice current = 0;
  if (cuCtxGetDevice(&current) == CUDA_SUCCESS) {
    device = static_cast<int>(current);
  }
  return {start_ns, host().now_ns(), device, address, current_mpi_call()};
}

std::uint64_t allocation_bytes(std::uint64_t address) {
  CUdeviceptr base = 0;
  size_t bytes = 0;
  return cuMemGetAddressRange(&base, &bytes, static_cast<CUdeviceptr>(address)) == CUDA_SUCCESS ? bytes : 0;
}

bool subscribe_api_callbacks(IpcTracker& ipc_tracker) {
  tracker = &ipc_tracker;
  if (!cupti_ok(cuptiSubscribe(&subscriber, on_callback, nullptr), "cuptiSubscribe")) {
    return false;
  }
  return enable(CUPTI_CB_DOMAIN_RUNTIME_API, kRuntimeCallbacks) &&
         enable(CUPTI_CB_DOMAIN_DRIVER_API, kDriverCallbacks) &&
         enable(CUPTI_CB_DOMAIN_RUNTIME_API, kRuntimeAllocationCallbacks) &&
         enable(CUPTI_CB_DOMAIN_DRIVER_API, kDriverAllocationCallbacks);
}

bool enable_nvtx_step_callbacks() {
  std::size_t count = 0;
  const std::uint32_t* ids = nvtx_step_callbacks(&count);
  for (std::size_t i = 0; i < count; ++i) {
    if (!cupti_ok(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_NVTX, ids[i]),
                  "cuptiEnableCallback(NVTX)")) {
      return false;
    }
  }
  return true;
}

void unsubscribe_api_callbacks() {
  if (subscriber != nullptr) {
    cuptiUnsubscribe(subscriber);
    subscriber = nullptr;
  }
}

} // namespace commlens::cuda
