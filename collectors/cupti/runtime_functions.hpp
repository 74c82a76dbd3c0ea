#pragma once
// The interposed runtime functions (contract::RuntimeFunction) as CUPTI names them: the callback
// id and the name its API records carry, so that cuda_api_calls rows made from the calls
// themselves (runtime_copies.hpp) read exactly as those CUPTI would have recorded.
#include "collector_hooks.hpp"
#include "cuda_records.hpp"

#include <cstdint>
#include <string>

namespace commlens::cuda {

// CUPTI's runtime callback id of the function.
std::uint32_t runtime_callback_id(contract::RuntimeFunction function) noexcept;
// The name of a runtime function by its callback id, for those of the table; empty otherwise.
std::string interposed_function_name(ApiDomain domain, std::uint32_t callback_id);

} // namespace commlens::cuda
