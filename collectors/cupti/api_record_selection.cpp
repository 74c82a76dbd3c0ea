#include "api_record_selection.hpp"

#include "plugin_context.hpp"

#include <cupti.h>

#include <array>
#include <string_view>

namespace commlens::cuda {

namespace {

// Selected by name rather than by a list of callback ids, so functions a newer CUDA adds (another
// cuMemcpy or launch variant) are covered without a change here.
constexpr std::array kDeviceWorkNameParts{std::string_view{"Memcpy"}, std::string_view{"Memset"},
                                          std::string_view{"Launch"}, std::string_view{"Synchronize"},
                                          std::string_view{"WaitEvent"}};

bool puts_work_on_device(std::string_view name) {
  for (const std::string_view part : kDeviceWorkNameParts) {
    if (name.find(part) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

template <class Enable>
bool enable_matching(CUpti_CallbackDomain domain, std::uint32_t id_count, Enable enable_one) {
  for (std::uint32_t id = 1; id < id_count; ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS && name != nullptr &&
        puts_work_on_device(name) && !cupti_ok(enable_one(id, 1), "cuptiActivityEnable*Api")) {
      return false;
    }
  }
  return true;
}

} // namespace

bool enable_device_work_api_records() {
  return enable_matching(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                         cuptiActivityEnableRuntimeApi) &&
         enable_matching(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
                         cuptiActivityEnableDriverApi);
}

} // namespace commlens::cuda
