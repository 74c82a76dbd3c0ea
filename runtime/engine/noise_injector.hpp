#pragma once
// COMMLENS_NOISE applied (noise/noise_schedule.hpp): the runtime's entries of the rooted
// collectives and their pipelines' loops call point(), which sleeps whatever delay the rank's
// schedule owes by now. Each delay is an NVTX range "commlens noise" (stored in nvtx_ranges when
// the CUPTI collector runs, visible in Nsight Systems too), and the totals go into the run table.
#include "noise/noise_schedule.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>

namespace commlens::runtime {

class NoiseInjector {
public:
  NoiseInjector(const noise::NoiseSettings& settings, int world_rank);

  void point() noexcept;
  std::uint64_t delays() const noexcept { return delays_.load(); }
  std::uint64_t injected_ns() const noexcept { return injected_ns_.load(); }

private:
  std::mutex mutex_; // the schedule, for threads calling collectives at once
  noise::NoiseSchedule schedule_;
  std::atomic<std::uint64_t> delays_{0};
  std::atomic<std::uint64_t> injected_ns_{0};
};

} // namespace commlens::runtime
