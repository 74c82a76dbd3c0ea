#include "api_record_selection.hpp"

#include "plugin_context.hpp"

#include <cupti.h>

#include <array>
#include <string_view>

namespace commlens::cuda {

namespace {

// Selected by name rather than by a list of callback ids, so functions a newer CUDA adds (another
// cuMemcpy or launch variant) are covered without a change here.
constexpr std::array kCopyNameParts{std::string_view{"Memcpy"}};
constexpr std::array kKernelDetailNameParts{std::string_view{"Memset"}, std::string_view{"Launch"},
                                            std::string_view{"Synchronize"}, std::string_view{"WaitEvent"}};

template <std::size_t N> bool names_any(std::string_view name, const std::array<std::string_view, N>& parts) {
  for (const std::string_view part : parts) {
    if (name.find(part) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

bool in_group(std::string_view name, ApiRecords which) {
  return which == ApiRecords::Copies ? names_any(name, kCopyNameParts)
                                     : names_any(name, kKernelDetailNameParts);
}

template <class Enable>
bool set_matching(CUpti_CallbackDomain domain, std::uint32_t id_count, ApiRecords which, bool on,
                  Enable enable_one) {
  for (std::uint32_t id = 1; id < id_count; ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS && name != nullptr &&
        in_group(name, which) && !cupti_ok(enable_one(id, on ? 1 : 0), "cuptiActivityEnable*Api")) {
      return false;
    }
  }
  return true;
}

CUpti_CallbackDomain cupti_domain(ApiDomain domain) {
  return domain == ApiDomain::Driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
}

} // namespace

bool set_api_records(ApiRecords which, bool on) {
  return set_matching(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, which, on,
                      cuptiActivityEnableRuntimeApi) &&
         set_matching(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, which, on,
                      cuptiActivityEnableDriverApi);
}

std::string api_function_name(ApiDomain domain, std::uint32_t callback_id) {
  const char* name = nullptr;
  return cuptiGetCallbackName(cupti_domain(domain), callback_id, &name) == CUPTI_SUCCESS && name != nullptr
             ? api_function_name(domain, std::string_view(name))
             : std::string();
}

} // namespace commlens::cuda
