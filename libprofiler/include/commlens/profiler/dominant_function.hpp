#pragma once
// Picks the function with the most time in a span of the timeline: the colour of a merged block.
// Shared by the merge's level-of-detail tiles (timeline_tiles.cpp) and the viewer's bins
// (analysis/src/timeline_bins.cpp) so both colour a span the same way.
#include <algorithm>
#include <cstdint>
#include <vector>

namespace commlens {

class DominantFunction {
public:
  // `weight` is the time the function adds to the span; callers add 1 to a call's time so that
  // zero-length calls still vote.
  void add(int function_id, std::int64_t weight) {
    const auto id = static_cast<std::size_t>(std::max(function_id, 0));
    if (id >= weight_by_function_.size())
      weight_by_function_.resize(id + 1, kAbsent);
    if (weight_by_function_[id] == kAbsent) {
      weight_by_function_[id] = 0;
      touched_.push_back(static_cast<int>(id));
    }
    weight_by_function_[id] += weight;
  }

  // The heaviest function so far (the lowest id among equals; 0 when nothing was added), and
  // starts over. Costs the number of distinct functions added, not the size of the id range.
  int take() {
    int best_id = 0;
    std::int64_t best_weight = -1;
    for (const int id : touched_) {
      const auto weight = weight_by_function_[static_cast<std::size_t>(id)];
      if (weight > best_weight || (weight == best_weight && id < best_id)) {
        best_weight = weight;
        best_id = id;
      }
      weight_by_function_[static_cast<std::size_t>(id)] = kAbsent;
    }
    touched_.clear();
    return best_id;
  }

private:
  static constexpr std::int64_t kAbsent = -1;
  std::vector<std::int64_t> weight_by_function_; // kAbsent: not in the current span
  std::vector<int> touched_;
};

} // namespace commlens
