#pragma once
// User NVTX ranges as phases. nvtx_ranges has no thread column, so a rank's ranges of every thread
// form one nesting: a range's path is its parent's path, "/", its name, where the parent is the
// latest-starting range of that rank still open when it starts. A traced call belongs to the
// innermost range (latest start) that contains its start and takes that range's path. commlens'
// own `MPI` domain marks each MPI call and is never a phase.
#include "commlens/analysis/report.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::analysis::detail {

struct NvtxRange {
  int rank = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::string path;
};

// The user ranges of one rank (or all), ordered by rank, then start, outer before inner.
std::vector<NvtxRange> load_nvtx_ranges(const Database& database, std::optional<int> rank);

// True when `path` is `selected` or nested in it: "train/step" lies under "train", "trainer" not.
bool nvtx_path_matches(std::string_view path, std::string_view selected);

struct TracedCall {
  std::int64_t id = 0;
  int rank = 0;
  int function_id = 0;
  std::int64_t comm_id = -1; // -1 for calls without a communicator, as in call_stats
  int peer = -1;
  int phase = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_recv = 0;
};

using CallInRange = std::function<void(const TracedCall& call, const std::string& path)>;

// Streams the traced calls (mpi_calls, in the MPI_Pcontrol phase `phase` when given) that start
// inside one of `ranges`, each with the path of its innermost range. `ranges` as load_nvtx_ranges
// returns them.
void for_each_call_in_ranges(const Database& database, const std::vector<NvtxRange>& ranges,
                             std::optional<int> phase, const CallInRange& visit);

} // namespace commlens::analysis::detail
