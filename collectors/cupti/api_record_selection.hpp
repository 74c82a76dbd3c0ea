#pragma once
#include "cuda_records.hpp"

#include <cstdint>
#include <string>

namespace commlens::cuda {

// CUPTI's API activity records, turned on only for the runtime and driver functions that put work
// on a GPU. External correlation, which ties that work to the MPI or NCCL call around it, arrives
// through those API records; enabling every API (CUPTI_ACTIVITY_KIND_RUNTIME / _DRIVER) also
// recorded each pointer query, stream query and event call, the largest part of the collector's
// cost on copy-heavy programs (docs/performance.md).
enum class ApiRecords {
  Copies,       // memcpy functions: always on, copies are classified and tied to their call
  KernelDetail, // launches, memsets, synchronisations and stream waits: with the kernel records only
};

// Turns the API records of one group on or off. Returns false when CUPTI refused.
bool set_api_records(ApiRecords which, bool on);

// The name of an API function whose records came (cuda_records.hpp: api_function_name); empty when
// CUPTI does not know the id.
std::string api_function_name(ApiDomain domain, std::uint32_t callback_id);

} // namespace commlens::cuda
