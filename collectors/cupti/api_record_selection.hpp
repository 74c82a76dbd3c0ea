#pragma once

namespace commlens::cuda {

// Turns on CUPTI's API activity records only for the runtime and driver functions that put work
// on a GPU (copies, memsets, kernel launches, synchronisations). External correlation, which ties
// that work to the MPI call around it, arrives through those API records; enabling every API
// (CUPTI_ACTIVITY_KIND_RUNTIME / _DRIVER) also recorded each pointer query, stream query and
// event call, the largest part of the collector's cost on copy-heavy programs
// (docs/performance.md). Returns false when CUPTI refused.
bool enable_device_work_api_records();

} // namespace commlens::cuda
