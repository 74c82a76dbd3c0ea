#pragma once
// The collector's boundary: CUPTI activity records in, commlens records out (Kineto style).
// Only activity_collector.cpp, which owns the buffers, includes it; nothing else sees a CUPTI type.
#include "cuda_records.hpp"
#include "external_correlation.hpp"

#include <cupti_activity.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace commlens::cuda {

struct ConvertedRecords {
  std::vector<CudaCopy> copies;
  std::vector<CudaKernel> kernels;
  std::vector<CudaMemset> memsets;
  std::vector<CudaSynchronization> synchronizations;
  std::vector<NvtxRange> nvtx_ranges;
  std::vector<CudaApiCall> api_calls; // only when kept (ActivityConverter::keep_api_calls)
};

// Converts one buffer's records, adding external-correlation links to `correlations`. NVTX
// start markers wait in `open_markers` for their end marker (possibly in a later buffer).
class ActivityConverter {
public:
  void convert(const CUpti_Activity* record, ConvertedRecords& out, CorrelationTable& correlations);
  // API records come to link external correlation ids in every mode; they become rows only in
  // trace mode.
  void keep_api_calls(bool keep) noexcept { keep_api_calls_ = keep; }

private:
  std::unordered_map<std::uint64_t, NvtxRange> open_markers_;
  bool keep_api_calls_ = false;
};

} // namespace commlens::cuda
