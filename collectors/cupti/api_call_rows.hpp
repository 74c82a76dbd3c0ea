#pragma once
// cuda_api_calls rows (trace mode): the host's CUDA API calls that CUPTI recorded
// (api_record_selection.hpp says which) or that libcommlens.so's runtime functions saw
// (runtime_copies.hpp), each with its thread (thread_numbers.hpp), and the
// cuda_api_functions row of each function the first time one of its calls is stored.
#include "cuda_records.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace commlens::cuda {

// `row_ns` moves a call's time onto the rows' timeline; `name_of` names a function the first time
// (CUPTI's name, or the interposed functions' table). Called from one thread at a time: under the
// activity buffers' lock, or on the writer of the runtime's calls (only one source runs).
void store_api_calls(const std::vector<CudaApiCall>& calls, std::int64_t (*row_ns)(std::uint64_t),
                     std::string (*name_of)(ApiDomain domain, std::uint32_t callback_id));

} // namespace commlens::cuda
