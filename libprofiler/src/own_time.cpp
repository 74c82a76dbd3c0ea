#include "commlens/profiler/own_time.hpp"

namespace commlens {
namespace {

// Meters are defined at static initialisation, before any thread could read the list.
const OwnTimeMeter* meters = nullptr;

} // namespace

OwnTimeMeter::OwnTimeMeter(const char* component) noexcept : component_(component), next_(meters) {
  meters = this;
}

const OwnTimeMeter* first_own_time_meter() noexcept {
  return meters;
}

bool own_time_sampled() noexcept {
  thread_local std::uint32_t calls = 0;
  return ++calls % kOwnTimeSampleEvery == 0;
}

} // namespace commlens
