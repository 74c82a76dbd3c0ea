#pragma once
// cuda_api_calls rows (trace mode): the host's CUDA API calls that CUPTI recorded
// (api_record_selection.hpp says which), each with its thread (thread_numbers.hpp), and the
// cuda_api_functions row of each function the first time one of its calls is stored.
#include "cuda_records.hpp"

#include <cstdint>
#include <vector>

namespace commlens::cuda {

// `row_ns` moves a CUPTI timestamp onto the rows' timeline. Called under the activity buffers' lock.
void store_api_calls(const std::vector<CudaApiCall>& calls, std::int64_t (*row_ns)(std::uint64_t));

} // namespace commlens::cuda
