#pragma once
// COMMLENS_NOISE=HZ:MAX_MS[:RANKS]: system noise injected on chosen ranks, the experiment of
// "ADAPT: An Event-Based Adaptive Collective Communication Framework" (Luo et al.):
// HZ times a second a rank is held up for a delay drawn uniformly from 0 to MAX_MS milliseconds.
// The parsing and the schedule are plain logic (tested without MPI or a GPU); the runtime applies
// the schedule (engine/noise_injector.hpp).
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::runtime::noise {

struct NoiseSettings {
  double hz = 0;          // delays per second, > 0 and at most 1000
  double max_ms = 0;      // the longest delay, >= 0 and at most 1000 ms
  std::vector<int> ranks; // world ranks held up; empty: every rank
  bool operator==(const NoiseSettings&) const = default;
};

// "10:10" (every rank), "10:10:1,3", "10:10:0-3,6". Null with *error set for anything else.
std::optional<NoiseSettings> parse_noise(std::string_view text, std::string* error);
bool applies_to(const NoiseSettings& settings, int world_rank) noexcept;
// "10 Hz, 0-10 ms, ranks 1,3" (or "every rank"): the run table's value.
std::string describe(const NoiseSettings& settings);

// One rank's delays: the k-th is due at start + (phase + k) / hz seconds, its length uniform in
// [0, max_ms]; the phase (uniform in [0, 1)) and the lengths come from a generator seeded with
// `seed`, so a run is repeatable and ranks seeded apart are not in step.
class NoiseSchedule {
public:
  NoiseSchedule(const NoiseSettings& settings, std::uint64_t seed, std::uint64_t start_ns);

  // The delay owed at now_ns, in ns (0: none): the delays due by then and not yet owed, except
  // those due more than a period before now_ns.
  std::uint64_t owed(std::uint64_t now_ns);
  std::uint64_t next_due_ns() const noexcept { return next_due_ns_; }

private:
  std::uint64_t delay_ns();

  double period_ns_;
  double max_ns_;
  std::uint64_t start_ns_;
  std::uint64_t next_index_ = 0;
  std::uint64_t next_due_ns_;
  std::mt19937_64 random_;
  double phase_;
};

} // namespace commlens::runtime::noise
