#include "phase_marks.hpp"

#include "collector_hooks.hpp"

#include <atomic>

namespace commlens::pmpi {

namespace {
std::atomic<bool> pcontrol_marks_phases{false};
} // namespace

bool begin_phase(Profiler& profiler, int level, PhaseMark mark) noexcept {
  if (mark == PhaseMark::Pcontrol) {
    pcontrol_marks_phases.store(true, std::memory_order_relaxed);
  } else if (pcontrol_marks_phases.load(std::memory_order_relaxed)) {
    return false;
  }
  profiler.begin_next_phase(level);
  for (const contract::CollectorSlot& slot : contract::collector_hooks().slots) {
    if (slot.phase_begun != nullptr) {
      slot.phase_begun(level);
    }
  }
  return true;
}

} // namespace commlens::pmpi
