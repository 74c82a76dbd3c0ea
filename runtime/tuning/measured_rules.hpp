#pragma once
// What `commlens tune` makes of its measurements. Every swept call ran one candidate (its
// runtime_ops.algorithm) at one size; per size the slowest rank's median is the candidate's time,
// the fastest candidate wins, and adjacent sizes with the same winner become one rule up to the
// largest of them, carrying per size the winner's and the runner-up's times (rule_measurement.hpp).
#include "tree_rules.hpp"
#include "tuning_table.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::runtime::tuning {

// One call on one rank, from runtime_ops.
struct CandidateCall {
  std::uint64_t bytes = 0;
  std::int64_t rank = 0;
  std::string candidate; // what ran (runtime_ops.algorithm, or a name tune gives it)
  std::int64_t duration_ns = 0;
};

struct CandidateTiming {
  std::uint64_t bytes = 0;
  std::string candidate;
  double median_ns = 0;
};

// Per size and candidate, the slowest rank's median: a collective is done when its last rank is,
// and the median leaves out the odd preempted call.
std::vector<CandidateTiming> candidate_timings(std::span<const CandidateCall> calls);

// Adjacent measured sizes won by one candidate (ties: the name first in alphabetical order).
struct WinnerRun {
  std::string winner;
  std::optional<std::uint64_t> max_bytes; // the run's largest size; none for the last run
  std::vector<MeasuredPoint> points;      // per size: the winner and the runner-up
  std::string why;                        // "fastest measured from 8 B to 1 KiB"
};
std::vector<WinnerRun> winner_runs(std::span<const CandidateTiming> timings);

// The calls the measurements ran on: the rules match exactly this shape.
struct MeasuredShape {
  GpuCount gpus = GpuCount::Two;
  bool ranks_share_gpu = false;
  bool mps = false; // data-movement and tree rules only: the allreduce rules apply with MPS or without
  int ranks = 0;    // the measured communicator's size; 0: not known (replaces every rank count's rules)
};

// Candidates named as the algorithms are (one_shot, two_shot, one_shot_striped).
std::vector<Rule> allreduce_rules(std::span<const WinnerRun> runs, const MeasuredShape& shape, bool in_place,
                                  std::uint32_t host_percent, const std::string& measurement);
// Candidates named direct, gpu_leader or staged (the host-staged baseline).
std::vector<MovementRule> movement_rules(std::span<const WinnerRun> runs, Collective collective,
                                         const MeasuredShape& shape, const std::string& measurement);
// Candidates named as runtime_ops names trees: tree:gpu=S,node=S,nodes=S:segment=N:window=W, with
// :streams=N after it for more than one stream and :push last for a bcast whose parents write their
// children's buffers. Throws TableError for another name.
std::vector<TreeRule> tree_rules(std::span<const WinnerRun> runs, RootedCollective collective,
                                 const MeasuredShape& shape, const std::string& measurement);

// Candidates named resident (the resident kernel) and table (the table's other algorithms): one
// rule for `collective` taking the resident kernel up to the largest size it won (0: none), with
// every size's times. Where the two are within noise of each other at small sizes, a size the
// table won below that limit is a near tie, so it does not cut the limit short.
ResidentRule resident_rule(std::span<const WinnerRun> runs, std::string_view collective,
                           const std::string& measurement);

// A table a new measurement of `shape` produced, followed by `earlier`'s rules for other shapes or
// measured at other rank counts, and the measurements those name (one file collects the runs of
// several shapes and rank counts); point_to_point from `measured` when it was measured, else
// `earlier`'s. Where one shape was measured at several rank counts, each count's rules get the
// rank range nearer to it than to the next measured count (2, 4 and 8: up to 3, 4 to 6, from 7);
// at one count they get none.
Table merge_measured(Table measured, const Table& earlier, const MeasuredShape& shape);

} // namespace commlens::runtime::tuning
