#include "commlens/profiler/clock.hpp"

namespace commlens {

namespace {
// Two clock reads of ~25 ns bound the error to ~1e-5 over 5 ms: 10 us per second of run, which
// the per-rank linear alignment removes anyway. Calibrated over MPI_Init (tens to hundreds of ms),
// the error is smaller still and no time is spent spinning.
constexpr std::uint64_t kCalibrationSpinNs = 5'000'000;
// Longest monotonic-clock bracket around a tick read that still counts as one instant. A process
// descheduled between the reads (ranks oversubscribing their cores) would otherwise pair ticks
// with a time tens of ms later and skew the rate by as much: that rate is also what turns
// COMMLENS_PVAR_PERIOD_MS into ticks.
constexpr std::uint64_t kMaxBracketNs = 2'000;

} // namespace

ClockReading read_clocks() noexcept {
  for (;;) {
    const std::uint64_t before = monotonic_ns();
    const std::uint64_t ticks = now_ticks();
    const std::uint64_t after = monotonic_ns();
    if (after - before <= kMaxBracketNs)
      return {ticks, before + (after - before) / 2};
  }
}

TickConverter::TickConverter() : TickConverter(read_clocks()) {}

TickConverter::TickConverter(ClockReading origin)
    : origin_ticks_(origin.ticks), origin_ns_(origin.ns), ns_per_tick_(1.0) {
#if defined(__x86_64__)
  ClockReading end = read_clocks();
  while (end.ns - origin.ns < kCalibrationSpinNs)
    end = read_clocks();
  ns_per_tick_ = static_cast<double>(end.ns - origin.ns) / static_cast<double>(end.ticks - origin.ticks);
#endif
}

} // namespace commlens
