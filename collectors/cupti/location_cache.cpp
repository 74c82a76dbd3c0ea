#include "location_cache.hpp"

#include <atomic>

namespace commlens::cuda {

namespace {
// Bumped on every allocation or free.
std::atomic<std::uint64_t> forget_count{0};
} // namespace

std::uint64_t forget_generation() noexcept {
  return forget_count.load(std::memory_order_relaxed);
}

void forget_all_ranges() noexcept {
  forget_count.fetch_add(1, std::memory_order_relaxed);
}

} // namespace commlens::cuda
