#pragma once
// NVTX domains that libraries annotate their own work with. Their ranges are not the program's
// phases: commlens' own MPI ranges are in mpi_calls already, and NCCL's (ncclAllReduce, ...) are
// the nccl:* calls. The CUDA collector does not store them and the reports leave them out of
// databases that hold them.
#include <array>
#include <string>
#include <string_view>

namespace commlens {

inline constexpr std::array<std::string_view, 10> kLibraryNvtxDomains = {
    "MPI", "NCCL", "cuBLAS", "cuBLASLt", "cuDNN", "cuFFT", "cuSOLVER", "cuSPARSE", "NVSHMEM", "TensorRT"};

inline bool is_library_nvtx_domain(std::string_view domain) noexcept {
  for (const std::string_view library : kLibraryNvtxDomains) {
    if (domain == library) {
      return true;
    }
  }
  return false;
}

// An SQL condition on nvtx_ranges.domain that keeps the program's own ranges.
inline std::string program_nvtx_domain_sql() {
  std::string list;
  for (const std::string_view library : kLibraryNvtxDomains) {
    list += std::string(list.empty() ? "" : ", ") + "'" + std::string(library) + "'";
  }
  return "(domain IS NULL OR domain NOT IN (" + list + "))";
}

} // namespace commlens
