#include "commlens/profiler/clock.hpp"

namespace commlens {

namespace {
// Two clock reads of ~25 ns bound the error to ~1e-5 over 5 ms: 10 us per second of run, which
// the per-rank linear alignment removes anyway.
constexpr std::uint64_t kCalibrationSpinNs = 5'000'000;
} // namespace

TickConverter::TickConverter() : origin_ticks_(now_ticks()), origin_ns_(monotonic_ns()), ns_per_tick_(1.0) {
#if defined(__x86_64__)
  std::uint64_t ns = origin_ns_;
  std::uint64_t ticks = origin_ticks_;
  while (ns - origin_ns_ < kCalibrationSpinNs) {
    ticks = now_ticks();
    ns = monotonic_ns();
  }
  ns_per_tick_ = static_cast<double>(ns - origin_ns_) / static_cast<double>(ticks - origin_ticks_);
#endif
}

} // namespace commlens
