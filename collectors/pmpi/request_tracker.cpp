#include "request_tracker.hpp"

#include <memory>

namespace commlens::pmpi {

namespace {
// Requests in flight at once per process; a request posted past this is simply not tracked.
constexpr std::size_t kTrackedRequests = 1u << 15;
std::unique_ptr<RequestTracker> tracker;
} // namespace

void start_request_tracker() {
  tracker = std::make_unique<RequestTracker>(kTrackedRequests);
}

RequestTracker& request_tracker() noexcept {
  return *tracker;
}

void forget_request(std::uint64_t key) noexcept {
  if (RequestTracker::Slot* slot = tracker->find(key)) {
    tracker->erase(slot);
  }
}

} // namespace commlens::pmpi
