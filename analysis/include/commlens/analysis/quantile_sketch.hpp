#pragma once
// Quantiles of a stream of non-negative durations in bounded memory, so reports over tens of
// millions of calls need neither a sort in SQLite nor every value in memory. Values below 128 are
// kept exactly; larger ones fall in buckets 1/128 of their power of two wide, and a quantile is
// reported as the lower edge of its bucket (relative error below 0.8%). The maximum is exact.
#include <cstdint>
#include <map>

namespace commlens::analysis {

class QuantileSketch {
public:
  void add(std::int64_t value);
  std::uint64_t count() const noexcept { return count_; }
  std::int64_t max() const noexcept { return max_; }
  // Nearest rank: the smallest value v with at least ceil(fraction * count) values <= v. 0 if empty.
  std::int64_t quantile(double fraction) const;

private:
  // Sparse: a typical function fills a few dozen buckets.
  std::map<std::uint32_t, std::uint64_t> buckets_;
  std::uint64_t count_ = 0;
  std::int64_t max_ = 0;
};

} // namespace commlens::analysis
