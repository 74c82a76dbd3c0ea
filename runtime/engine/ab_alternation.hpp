#pragma once
// COMMLENS_RUNTIME=ab: the runtime and the baseline take turns per call signature (what makes calls
// alike: count and datatype, and the op of a reduction), the runtime first, so each call site gets
// both implementations in turn and both land in one trace. Collectives: every rank makes the same
// calls in the same order, so the turns agree without talking. Safe from any thread.
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

namespace commlens::runtime {

template <typename... Signature> class AbAlternation {
public:
  bool runtime_turn(const Signature&... signature) {
    std::lock_guard lock(mutex_);
    return counters_[std::tuple{signature...}]++ % 2 == 0;
  }

private:
  std::mutex mutex_;
  std::map<std::tuple<Signature...>, std::uint64_t> counters_;
};

} // namespace commlens::runtime
