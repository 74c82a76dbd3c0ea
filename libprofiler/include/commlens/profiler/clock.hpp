#pragma once
// The profiler's clock: raw ticks on the hot path, nanoseconds of CLOCK_MONOTONIC in the database.
// On x86-64 with an invariant TSC a tick read costs ~10 ns against ~25 ns for clock_gettime, which
// matters when the whole per-call budget is 30 ns. Ticks are converted by the writer thread only.
#include <cstdint>
#include <ctime>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace commlens {

inline std::uint64_t monotonic_ns() noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(now.tv_nsec);
}

#if defined(__x86_64__)
inline std::uint64_t now_ticks() noexcept { return __rdtsc(); }
#else
inline std::uint64_t now_ticks() noexcept { return monotonic_ns(); }
#endif

// Maps ticks to CLOCK_MONOTONIC nanoseconds from two reference points taken far apart, so the rate
// error stays below a microsecond per minute. Until the second point is fixed the rate comes from a
// short calibration spin at construction.
class TickConverter {
public:
  TickConverter();
  // Fixes the rate from the construction point to now. Called once, by the writer, after enough
  // run time has passed (or at finalize for short runs); later conversions use that rate.
  void fix_rate();
  bool rate_fixed() const noexcept { return rate_fixed_; }
  std::uint64_t to_ns(std::uint64_t ticks) const noexcept {
    const auto delta = static_cast<long double>(static_cast<std::int64_t>(ticks - origin_ticks_));
    return origin_ns_ + static_cast<std::int64_t>(delta * ns_per_tick_);
  }
  std::uint64_t ticks_to_duration_ns(std::uint64_t ticks) const noexcept {
    return static_cast<std::uint64_t>(static_cast<long double>(ticks) * ns_per_tick_);
  }
  long double ns_per_tick() const noexcept { return ns_per_tick_; }

private:
  std::uint64_t origin_ticks_;
  std::uint64_t origin_ns_;
  long double ns_per_tick_;
  bool rate_fixed_ = false;
};

} // namespace commlens
