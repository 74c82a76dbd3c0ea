#pragma once
// Unions and intersections of time intervals: how long a rank's requests were pending, its GPU
// computed or communicated, and how much of one overlapped the other.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace commlens::analysis::detail {

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>; // [start, end)

// Sorted by start; overlapping and touching intervals joined.
inline Intervals merged(Intervals intervals) {
  std::sort(intervals.begin(), intervals.end());
  Intervals out;
  for (const auto& interval : intervals)
    if (!out.empty() && interval.first <= out.back().second)
      out.back().second = std::max(out.back().second, interval.second);
    else
      out.push_back(interval);
  return out;
}

inline std::int64_t length(const Intervals& intervals) {
  std::int64_t total = 0;
  for (const auto& [start, end] : intervals)
    total += end - start;
  return total;
}

// Length of the intersection of two merged interval lists.
inline std::int64_t overlap(const Intervals& a, const Intervals& b) {
  std::int64_t total = 0;
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    total += std::max<std::int64_t>(0, std::min(a[i].second, b[j].second) - std::max(a[i].first, b[j].first));
    if (a[i].second < b[j].second)
      ++i;
    else
      ++j;
  }
  return total;
}

} // namespace commlens::analysis::detail
