#include "timeline_bins.hpp"

#include <algorithm>

namespace commlens::analysis {

void BinBuilder::add(const BinPart& part, std::vector<TimelineBin>& bins) {
  if (!open_ || part.start_ns >= current_.start_ns + bin_ns_) {
    close_into(bins);
    current_ = {.start_ns = part.start_ns, .end_ns = part.end_ns};
    open_ = true;
  }
  extend(part);
}

bool BinBuilder::extend(const BinPart& part) {
  if (!open_)
    return false;
  current_.end_ns = std::max(current_.end_ns, part.end_ns);
  current_.calls += part.calls;
  current_.busy_ns += part.busy_ns;
  // Each call adds 1 to its time so that zero-length calls still vote.
  dominant_.add(part.function_id, part.busy_ns + static_cast<std::int64_t>(part.calls));
  return true;
}

void BinBuilder::close_into(std::vector<TimelineBin>& bins) {
  if (!open_)
    return;
  current_.dominant_function_id = dominant_.take();
  bins.push_back(current_);
  open_ = false;
}

} // namespace commlens::analysis
