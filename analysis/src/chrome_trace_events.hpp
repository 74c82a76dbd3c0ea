#pragma once
// Pieces of the Chrome/Perfetto export shared by the MPI part (chrome_export.cpp) and the CUDA and
// NVTX part (chrome_gpu_events.cpp).
#include "commlens/analysis/database.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace commlens::analysis::detail {

// The format's unit is the microsecond; three decimals keep nanoseconds.
inline std::string microseconds(std::int64_t nanoseconds) {
  return fmt::format("{:.3f}", static_cast<double>(nanoseconds) / 1000.0);
}

struct GpuEventCounts {
  std::uint64_t copies = 0;
  std::uint64_t kernels = 0;
  std::uint64_t nvtx_ranges = 0;
};

// Every cuda_copies, cuda_kernels and user nvtx_ranges row as a complete event in its rank's
// process, on tracks placed below the rank's MPI threads: "NVTX", then "GPU d copies" and
// "GPU d kernels" per device. Tables the database lacks are skipped.
GpuEventCounts write_chrome_gpu_events(const Database& database, std::FILE* out);

} // namespace commlens::analysis::detail
