#include "engine/noise_injector.hpp"

#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <thread>

namespace commlens::runtime {

namespace {
std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}
constexpr std::uint64_t kSeed = 0x9e3779b97f4a7c15ULL; // ranks' schedules differ by their rank
} // namespace

NoiseInjector::NoiseInjector(const noise::NoiseSettings& settings, int world_rank)
    : schedule_(settings, kSeed + static_cast<std::uint64_t>(world_rank), steady_ns()) {}

void NoiseInjector::point() noexcept {
  std::uint64_t owed = 0;
  {
    std::lock_guard lock(mutex_);
    owed = schedule_.owed(steady_ns());
  }
  if (owed == 0) {
    return;
  }
  nvtxRangePushA("commlens noise");
  std::this_thread::sleep_for(std::chrono::nanoseconds(owed));
  nvtxRangePop();
  delays_.fetch_add(1);
  injected_ns_.fetch_add(owed);
}

} // namespace commlens::runtime
