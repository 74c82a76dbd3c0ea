#include "mpi_nvtx_ranges.hpp"

#include <nvtx3/nvToolsExt.h>

namespace commlens::nvtx {

namespace {
nvtxDomainHandle_t mpi_domain = nullptr;
std::vector<nvtxStringHandle_t> function_names; // by FunctionId
} // namespace

void start_mpi_ranges(const std::vector<FunctionDescription>& functions) {
  mpi_domain = nvtxDomainCreateA("MPI");
  function_names.clear();
  for (const FunctionDescription& function : functions) {
    function_names.push_back(nvtxDomainRegisterStringA(mpi_domain, function.name));
  }
}

void push_mpi_range(FunctionId function, std::uint64_t call_id) noexcept {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  attributes.payload.ullValue = call_id;
  if (function < function_names.size()) {
    attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attributes.message.registered = function_names[function];
  }
  nvtxDomainRangePushEx(mpi_domain, &attributes);
}

void pop_mpi_range() noexcept {
  nvtxDomainRangePop(mpi_domain);
}

} // namespace commlens::nvtx
