#pragma once
// Where a runtime call's host time goes around its GPU work, counted per thread: the time spent
// publishing its buffers (pointer queries, IPC handle exports, the wait for the buffers'
// producers), looking up or opening the peers' buffers, waiting at the agreement's barriers and at
// every node-segment barrier. The totals only grow; a blocking entry takes the difference across
// its call into its runtime_ops row (docs/schema.md), which with the CUDA collector's GPU spans
// tells where the small-message floor goes (bench/runtime_floor.sh).
#include <chrono>
#include <cstdint>

namespace commlens::runtime {

struct CallPhases {
  std::uint64_t publish_ns = 0;
  std::uint64_t map_ns = 0;
  std::uint64_t agree_ns = 0;   // the agreement's barriers (also counted in barrier_ns)
  std::uint64_t barrier_ns = 0; // every node-segment barrier

  CallPhases operator-(const CallPhases& earlier) const noexcept {
    return {publish_ns - earlier.publish_ns, map_ns - earlier.map_ns, agree_ns - earlier.agree_ns,
            barrier_ns - earlier.barrier_ns};
  }
};

// This thread's totals since it started.
inline thread_local CallPhases this_thread_phases;

// Adds the time from its construction to its destruction to one of this thread's totals.
class PhaseTimer {
public:
  explicit PhaseTimer(std::uint64_t& total) noexcept : total_(total), start_(now()) {}
  ~PhaseTimer() { total_ += now() - start_; }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

private:
  static std::uint64_t now() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
  }

  std::uint64_t& total_;
  std::uint64_t start_;
};

} // namespace commlens::runtime
