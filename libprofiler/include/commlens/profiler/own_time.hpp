#pragma once
// The profiler's own time on the program's threads inside the calls it wraps, for the calls that
// are frequent enough to matter to a training step (a DDP step makes hundreds of CUDA copies). One
// call in kOwnTimeSampleEvery of each thread is timed: from entering the wrapper to the wrapped
// function, and from its return to leaving the wrapper, so that the program's own work is never
// counted. Timing every call would add two clock reads to each; a sample of one in sixteen costs a
// counter increment on the others and estimates the total to within a few percent over the
// thousands of calls a run makes. The timed calls' own clock reads (about 10 ns each) count too, so
// the estimate errs a little high. Profiler::stop() stores each meter that saw a call as a
// profiler_overhead row: count and time_ns scaled up from the sample.
#include "commlens/profiler/clock.hpp"

#include <atomic>
#include <cstdint>

namespace commlens {

inline constexpr std::uint32_t kOwnTimeSampleEvery = 16;

// One component's totals, defined with static storage (it links itself into a list at start-up).
class OwnTimeMeter {
public:
  explicit OwnTimeMeter(const char* component) noexcept;
  OwnTimeMeter(const OwnTimeMeter&) = delete;
  OwnTimeMeter& operator=(const OwnTimeMeter&) = delete;

  const char* component() const noexcept { return component_; }
  std::uint64_t samples() const noexcept { return samples_.load(std::memory_order_relaxed); }
  std::uint64_t sampled_ticks() const noexcept { return ticks_.load(std::memory_order_relaxed); }
  void add(std::uint64_t ticks) noexcept {
    samples_.fetch_add(1, std::memory_order_relaxed);
    ticks_.fetch_add(ticks, std::memory_order_relaxed);
  }
  const OwnTimeMeter* next() const noexcept { return next_; }

private:
  const char* component_;
  std::atomic<std::uint64_t> samples_{0};
  std::atomic<std::uint64_t> ticks_{0};
  const OwnTimeMeter* next_;
};

// The meters of this process, most recently defined first.
const OwnTimeMeter* first_own_time_meter() noexcept;

// Whether the calling thread's current call is one of the sample (one in kOwnTimeSampleEvery).
bool own_time_sampled() noexcept;

// Around one wrapped call: forward(wrapped), or forwarding() just before the wrapped function and
// forwarded() just after.
class OwnTimeSample {
public:
  explicit OwnTimeSample(OwnTimeMeter& meter) noexcept
      : meter_(meter), sampled_(own_time_sampled()), start_(sampled_ ? now_ticks() : 0) {}
  ~OwnTimeSample() {
    if (sampled_) {
      meter_.add(now_ticks() - start_);
    }
  }
  OwnTimeSample(const OwnTimeSample&) = delete;
  OwnTimeSample& operator=(const OwnTimeSample&) = delete;

  // Calls the wrapped function, its time left out of the sample.
  template <class Wrapped> auto forward(Wrapped wrapped) {
    forwarding();
    auto result = wrapped();
    forwarded();
    return result;
  }

  void forwarding() noexcept {
    if (sampled_) {
      paused_ = now_ticks();
    }
  }
  void forwarded() noexcept {
    if (sampled_) {
      start_ += now_ticks() - paused_; // the wrapped function's time is the program's
    }
  }

private:
  OwnTimeMeter& meter_;
  bool sampled_;
  std::uint64_t start_;
  std::uint64_t paused_ = 0;
};

} // namespace commlens
