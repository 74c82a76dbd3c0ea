#pragma once
// Adds up the waits the matchers find into WaitBuckets, keeping only the waiting ranks and phases
// the report's filter selects.
#include "wait_states.hpp"

#include <tuple>

namespace commlens::analysis::detail {

struct Wait {
  WaitKind kind = WaitKind::LateSender;
  std::int64_t comm_id = 0;
  int rank = 0; // the rank that waited
  int phase = 0;
  int partner = 0;
  int function_id = 0; // the call it waited in
  std::int64_t wait_ns = 0;
  std::int64_t start_ns = 0; // when the call began to wait
};

class WaitAccumulator {
public:
  explicit WaitAccumulator(const ReportFilter& filter) : filter_(filter) {}

  void add(const Wait& wait) {
    if (wait.wait_ns <= 0 || (filter_.rank && *filter_.rank != wait.rank) ||
        (filter_.phase && *filter_.phase != wait.phase))
      return;
    auto& bucket = buckets_[{wait.kind, wait.comm_id, wait.rank, wait.partner, wait.function_id}];
    bucket.wait_ns += wait.wait_ns;
    ++bucket.calls;
    if (wait.wait_ns > bucket.longest_ns) {
      bucket.longest_ns = wait.wait_ns;
      bucket.longest_start_ns = wait.start_ns;
    }
  }

  template <typename Keep> std::vector<WaitBucket> buckets(Keep keep) const {
    std::vector<WaitBucket> out;
    for (const auto& [key, totals] : buckets_) {
      const auto& [kind, comm_id, rank, partner, function_id] = key;
      WaitBucket bucket{kind,
                        comm_id,
                        rank,
                        partner,
                        function_id,
                        totals.wait_ns,
                        totals.calls,
                        totals.longest_start_ns,
                        totals.longest_ns};
      if (keep(bucket))
        out.push_back(bucket);
    }
    return out;
  }

private:
  struct Totals {
    std::int64_t wait_ns = 0;
    std::uint64_t calls = 0;
    std::int64_t longest_start_ns = 0;
    std::int64_t longest_ns = 0;
  };
  ReportFilter filter_;
  std::map<std::tuple<WaitKind, std::int64_t, int, int, int>, Totals> buckets_;
};

} // namespace commlens::analysis::detail
