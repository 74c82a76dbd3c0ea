#include "runtime_functions.hpp"

#include <cupti_runtime_cbid.h>

#include <array>
#include <cstddef>

namespace commlens::cuda {

namespace {

using contract::RuntimeFunction;

struct Named {
  RuntimeFunction function;
  std::uint32_t callback_id;
  const char* name;
};

// In the enum's order (checked below).
constexpr std::array kFunctions{
    Named{RuntimeFunction::Memcpy, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy"},
    Named{RuntimeFunction::MemcpyPtds, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000, "cudaMemcpy_ptds"},
    Named{RuntimeFunction::MemcpyAsync, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync"},
    Named{RuntimeFunction::MemcpyAsyncPtsz, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
          "cudaMemcpyAsync_ptsz"},
    Named{RuntimeFunction::MemcpyPeer, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000, "cudaMemcpyPeer"},
    Named{RuntimeFunction::MemcpyPeerAsync, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000,
          "cudaMemcpyPeerAsync"},
    Named{RuntimeFunction::IpcGetMemHandle, CUPTI_RUNTIME_TRACE_CBID_cudaIpcGetMemHandle_v4010,
          "cudaIpcGetMemHandle"},
    Named{RuntimeFunction::IpcOpenMemHandle, CUPTI_RUNTIME_TRACE_CBID_cudaIpcOpenMemHandle_v4010,
          "cudaIpcOpenMemHandle"},
    Named{RuntimeFunction::IpcCloseMemHandle, CUPTI_RUNTIME_TRACE_CBID_cudaIpcCloseMemHandle_v4010,
          "cudaIpcCloseMemHandle"},
    Named{RuntimeFunction::StreamBeginCapture, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
          "cudaStreamBeginCapture"},
    Named{RuntimeFunction::StreamEndCapture, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
          "cudaStreamEndCapture"},
    Named{RuntimeFunction::Malloc, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc"},
    Named{RuntimeFunction::MallocManaged, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
          "cudaMallocManaged"},
    Named{RuntimeFunction::MallocHost, CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020, "cudaMallocHost"},
    Named{RuntimeFunction::HostAlloc, CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020, "cudaHostAlloc"},
    Named{RuntimeFunction::HostRegister, CUPTI_RUNTIME_TRACE_CBID_cudaHostRegister_v4000, "cudaHostRegister"},
    Named{RuntimeFunction::MallocAsync, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, "cudaMallocAsync"},
    Named{RuntimeFunction::Free, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, "cudaFree"},
    Named{RuntimeFunction::FreeHost, CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020, "cudaFreeHost"},
    Named{RuntimeFunction::HostUnregister, CUPTI_RUNTIME_TRACE_CBID_cudaHostUnregister_v4000,
          "cudaHostUnregister"},
    Named{RuntimeFunction::FreeAsync, CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, "cudaFreeAsync"},
    Named{RuntimeFunction::DeviceSynchronize, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
          "cudaDeviceSynchronize"},
    Named{RuntimeFunction::StreamSynchronize, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
          "cudaStreamSynchronize"},
    Named{RuntimeFunction::EventSynchronize, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
          "cudaEventSynchronize"},
};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kFunctions.size(); ++i) {
    if (static_cast<std::size_t>(kFunctions[i].function) != i) {
      return false;
    }
  }
  return kFunctions.size() == static_cast<std::size_t>(RuntimeFunction::EventSynchronize) + 1;
}
static_assert(in_enum_order(), "kFunctions lists every RuntimeFunction once, in the enum's order");

} // namespace

std::uint32_t runtime_callback_id(RuntimeFunction function) noexcept {
  return kFunctions[static_cast<std::size_t>(function)].callback_id;
}

std::string interposed_function_name(ApiDomain domain, std::uint32_t callback_id) {
  if (domain == ApiDomain::Runtime) {
    for (const Named& named : kFunctions) {
      if (named.callback_id == callback_id) {
        return named.name;
      }
    }
  }
  return {};
}

} // namespace commlens::cuda
