#pragma once
// Dynamic selection (COMMLENS_RUNTIME_SELECT=dynamic): for one operation and size bucket, the
// runtime tries its candidate algorithms or settings in turns (explore), keeps the fastest
// (exploit) and measures every candidate again now and then (re-check): a run-time choice by
// measurement, where the Dynamic algorithm of "Design considerations for GPU-aware collective
// communications in MPI" (Faraji and Afsahi) chooses by a cost model (docs/runtime.md, Dynamic
// selection). Plain C++ and deterministic: every rank of a communicator
// holds its own learner, feeds it the same agreed figures (the slowest rank's median per
// candidate, one small allreduce at the end of each round) and so makes the same choices.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace commlens::runtime::tuning {

struct LearnerSettings {
  std::uint32_t trials = 3;             // calls per candidate per round; the round keeps their median
  std::uint64_t first_exploit = 64;     // calls the first winner runs before its first re-check
  std::uint64_t longest_exploit = 4096; // each confirmed winner's next stretch doubles, up to this
  double switch_margin = 0.03;          // a re-check replaces the winner only if 3 % faster
  // A candidate slower than the winner by this factor at the last agreement is re-checked only at
  // every dominated_every-th re-check: re-checking it costs the most and is least likely to pay.
  double dominated_factor = 2.0;
  std::uint32_t dominated_every = 4;
};

// COMMLENS_RUNTIME_SELECT=sweep, what `commlens tune` measures with: every call runs the next
// candidate in turn and the learner never decides (its round has no end).
inline constexpr LearnerSettings kSweepSettings{.trials = UINT32_MAX};

enum class LearnerPhase { Explore, Recheck, Exploit };
const char* learner_phase_name(LearnerPhase phase) noexcept; // explore, recheck, exploit

struct LearnerTurn {
  std::size_t candidate = 0;
  LearnerPhase phase = LearnerPhase::Explore;
};

class BucketLearner {
public:
  BucketLearner(std::size_t candidates, const LearnerSettings& settings);

  // What the next call runs. The same until record() is called, so a call that went to the
  // baseline (agreed by every rank) does not advance the schedule.
  LearnerTurn next() const noexcept;
  // This rank's time of the call next() named (recorded for every call that ran, exploiting too).
  void record(double ns);
  // The round's trials are all in: agree on round_medians() across the ranks (the maximum per
  // candidate: a collective is done when its slowest rank is) and hand the result to decide().
  // Candidates the round left out keep their last agreed figure, the same on every rank.
  bool round_complete() const noexcept;
  std::vector<double> round_medians() const;
  void decide(std::span<const double> agreed_medians);

  std::size_t candidates() const noexcept { return best_ns_.size(); }
  bool decided() const noexcept { return decided_; }
  std::size_t best() const noexcept { return best_; }
  double best_ns() const noexcept { return best_ns_[best_]; }
  std::uint64_t exploit_left() const noexcept { return exploit_left_; }
  // For runtime_ops.decision_source: "dynamic explore 2/6", "dynamic exploit 1 (12.5 us, check in 40)".
  std::string describe(const LearnerTurn& turn) const;

private:
  LearnerSettings settings_;
  void start_round();

  std::vector<std::vector<double>> round_; // this round's times per candidate
  std::vector<double> best_ns_;            // last agreed median per candidate
  std::vector<std::size_t> members_;       // the candidates the current round measures
  std::size_t turn_in_round_ = 0;          // calls recorded in the current round
  std::uint64_t rechecks_ = 0;
  std::size_t best_ = 0;
  bool decided_ = false;
  bool exploring_ = true; // in a round (explore or re-check), not exploiting
  std::uint64_t exploit_length_ = 0;
  std::uint64_t exploit_left_ = 0;
};

// One learner per operation and size bucket of a communicator: its key. `variant` tells apart calls
// of one function with other candidates (an allreduce in place or not).
struct LearnerKey {
  std::uint64_t comm_id = 0;
  std::uint32_t function = 0;
  std::uint32_t variant = 0;
  std::uint32_t bucket = 0;

  auto operator<=>(const LearnerKey&) const = default;
};

// The process's learners, made on a key's first call.
class LearnerRegistry {
public:
  explicit LearnerRegistry(const LearnerSettings& settings = {}) : settings_(settings) {}
  // The key's learner; a new one when the key had none or had another number of candidates.
  BucketLearner& learner(const LearnerKey& key, std::size_t candidates);

private:
  LearnerSettings settings_;
  std::map<LearnerKey, BucketLearner> learners_;
};

// Powers of two: bucket b holds sizes from 2^b to 2^(b+1) - 1 (0 and 1 byte: bucket 0).
std::uint32_t size_bucket(std::uint64_t bytes) noexcept;

} // namespace commlens::runtime::tuning
