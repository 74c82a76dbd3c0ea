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
inline std::uint64_t now_ticks() noexcept {
  return __rdtsc();
}
#else
inline std::uint64_t now_ticks() noexcept {
  return monotonic_ns();
}
#endif

// A tick read and the CLOCK_MONOTONIC time of the same instant (the two reads lie within 2 us).
struct ClockReading {
  std::uint64_t ticks = 0;
  std::uint64_t ns = 0;
};
ClockReading read_clocks() noexcept;

// Maps ticks to CLOCK_MONOTONIC nanoseconds with a rate measured once at start-up, over at least
// 5 ms (error ~1e-5). The rate never changes afterwards, so every time this process stores is on one
// linear scale; the init/finalize offset exchange between ranks then maps each rank's scale onto
// rank 0's, absorbing the rate error together with real clock drift.
class TickConverter {
public:
  TickConverter(); // calibrates, spinning 5 ms
  // Calibrates over the time since `earlier` (MPI_Init's own duration): no spin unless less than
  // 5 ms have passed since.
  explicit TickConverter(ClockReading earlier);
  // A scale stored earlier (the ranks table), so files can be decoded after the process is gone.
  TickConverter(std::uint64_t origin_ticks, std::uint64_t origin_ns, double ns_per_tick) noexcept
      : origin_ticks_(origin_ticks), origin_ns_(origin_ns), ns_per_tick_(ns_per_tick) {}

  std::uint64_t to_ns(std::uint64_t ticks) const noexcept {
    const auto delta = static_cast<double>(static_cast<std::int64_t>(ticks - origin_ticks_));
    return origin_ns_ + static_cast<std::int64_t>(delta * ns_per_tick_);
  }
  std::uint64_t duration_ns(std::uint64_t ticks) const noexcept {
    return static_cast<std::uint64_t>(static_cast<double>(ticks) * ns_per_tick_);
  }
  // The profiler's notion of "now" in nanoseconds, on the same scale as converted ticks.
  std::uint64_t now_ns() const noexcept { return to_ns(now_ticks()); }

  std::uint64_t origin_ticks() const noexcept { return origin_ticks_; }
  std::uint64_t origin_ns() const noexcept { return origin_ns_; }
  double ns_per_tick() const noexcept { return ns_per_tick_; }

private:
  std::uint64_t origin_ticks_;
  std::uint64_t origin_ns_;
  double ns_per_tick_;
};

} // namespace commlens
