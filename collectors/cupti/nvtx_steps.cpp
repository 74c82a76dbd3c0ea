#include "nvtx_steps.hpp"

#include "plugin_context.hpp"
#include "step_ranges.hpp"

#include <cupti.h>
#include <generated_nvtx_meta.h>

namespace commlens::cuda {

namespace {

constexpr std::uint32_t kCallbacks[] = {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx,
                                        CUPTI_CBID_NVTX_nvtxRangePop};

std::string step_range_name;
thread_local StepRangeNesting nesting;

// The text of an nvtxRangePushEx; empty for other kinds of message (wide or registered strings).
const char* pushed_text(const nvtxEventAttributes_t* attributes) {
  return attributes != nullptr && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII
             ? attributes->message.ascii
             : "";
}

} // namespace

const std::uint32_t* nvtx_step_callbacks(std::size_t* count) noexcept {
  *count = step_range_name.empty() ? 0 : std::size(kCallbacks);
  return kCallbacks;
}

void set_step_range_name(std::string name) {
  step_range_name = std::move(name);
}

void on_nvtx_step_callback(std::uint32_t callback_id, const void* callback_data) noexcept {
  const auto* params = static_cast<const CUpti_NvtxData*>(callback_data)->functionParams;
  bool step_begins = false;
  bool step_ends = false;
  if (callback_id == CUPTI_CBID_NVTX_nvtxRangePushA) {
    const char* message = static_cast<const nvtxRangePushA_params*>(params)->message;
    step_begins = nesting.pushed(message != nullptr ? message : "", step_range_name);
  } else if (callback_id == CUPTI_CBID_NVTX_nvtxRangePushEx) {
    step_begins = nesting.pushed(pushed_text(static_cast<const nvtxRangePushEx_params*>(params)->eventAttrib),
                                 step_range_name);
  } else if (callback_id == CUPTI_CBID_NVTX_nvtxRangePop) {
    step_ends = nesting.popped();
  }
  if (step_begins || step_ends) {
    host().begin_phase(step_begins ? 2 : 3);
  }
}

} // namespace commlens::cuda
