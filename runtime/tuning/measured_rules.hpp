#pragma once
// What `commlens tune` makes of its measurements: for each measured size the fastest algorithm,
// adjacent sizes with the same winner merged into one rule up to the largest of them.
#include "tuning_table.hpp"

#include <span>
#include <vector>

namespace commlens::runtime::tuning {

struct Timing {
  std::uint64_t bytes = 0;
  Algorithm algorithm = Algorithm::OneShot;
  std::uint32_t host_percent = 0; // one_shot_striped: the share it ran with
  double median_ns = 0;
};

// One call on one rank that ran the measured algorithm, from runtime_ops.
struct CallDuration {
  std::uint64_t bytes = 0;
  std::int64_t rank = 0;
  std::int64_t duration_ns = 0;
};

// Per size, the slowest rank's median: a collective is done when its last rank is, and the median
// leaves out the odd preempted call.
std::vector<Timing> timings_from_calls(std::span<const CallDuration> calls, Algorithm algorithm,
                                       std::uint32_t host_percent);

// The calls the measurements were taken on: the rules match exactly this shape.
struct MeasuredShape {
  GpuCount gpus = GpuCount::Two;
  bool ranks_share_gpu = false;
  bool in_place = false;
};

// One rule per run of sizes with the same winner (ties go to the algorithm listed first in
// kAlgorithms). A rule's max_bytes is the largest size of its run (sizes between two measured ones
// go to the larger one's winner); the last rule has none. Empty when there are no timings.
std::vector<Rule> rules_from_timings(std::span<const Timing> timings, const MeasuredShape& shape);

} // namespace commlens::runtime::tuning
