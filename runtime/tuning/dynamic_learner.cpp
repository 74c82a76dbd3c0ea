#include "dynamic_learner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace commlens::runtime::tuning {

namespace {

double median_of(std::vector<double> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

} // namespace

const char* learner_phase_name(LearnerPhase phase) noexcept {
  switch (phase) {
  case LearnerPhase::Recheck:
    return "recheck";
  case LearnerPhase::Exploit:
    return "exploit";
  case LearnerPhase::Explore:
    break;
  }
  return "explore";
}

BucketLearner::BucketLearner(std::size_t candidates, const LearnerSettings& settings)
    : settings_(settings), round_(candidates), best_ns_(candidates, 0.0),
      exploit_length_(settings.first_exploit) {
  if (candidates == 0 || settings.trials == 0 || settings.first_exploit == 0 ||
      settings.dominated_every == 0) {
    throw std::invalid_argument("a learner needs candidates, trials and an exploit length");
  }
  start_round();
}

void BucketLearner::start_round() {
  members_.clear();
  const bool everyone = !decided_ || rechecks_ % settings_.dominated_every == 0;
  for (std::size_t candidate = 0; candidate < candidates(); ++candidate) {
    if (everyone || candidate == best_ ||
        best_ns_[candidate] <= best_ns_[best_] * settings_.dominated_factor) {
      members_.push_back(candidate);
    }
  }
  turn_in_round_ = 0;
  exploring_ = true;
}

LearnerTurn BucketLearner::next() const noexcept {
  if (!exploring_) {
    return {best_, LearnerPhase::Exploit};
  }
  // Round robin, so that a drift in the machine's speed during a round touches every candidate.
  return {members_[turn_in_round_ % members_.size()],
          decided_ ? LearnerPhase::Recheck : LearnerPhase::Explore};
}

void BucketLearner::record(double ns) {
  if (!exploring_) {
    if (--exploit_left_ == 0) {
      ++rechecks_;
      start_round();
    }
    return;
  }
  round_[members_[turn_in_round_ % members_.size()]].push_back(ns);
  ++turn_in_round_;
}

bool BucketLearner::round_complete() const noexcept {
  return exploring_ && turn_in_round_ == members_.size() * settings_.trials;
}

std::vector<double> BucketLearner::round_medians() const {
  std::vector<double> medians;
  medians.reserve(round_.size());
  for (std::size_t candidate = 0; candidate < candidates(); ++candidate) {
    medians.push_back(round_[candidate].empty() ? best_ns_[candidate] : median_of(round_[candidate]));
  }
  return medians;
}

void BucketLearner::decide(std::span<const double> agreed_medians) {
  if (agreed_medians.size() != candidates()) {
    throw std::invalid_argument("one agreed median per candidate expected");
  }
  std::copy(agreed_medians.begin(), agreed_medians.end(), best_ns_.begin());
  // Ties go to the lower index (the static choice comes first), so every rank breaks them alike.
  const auto fastest =
      static_cast<std::size_t>(std::min_element(best_ns_.begin(), best_ns_.end()) - best_ns_.begin());
  const bool keep = decided_ && best_ns_[best_] <= best_ns_[fastest] * (1.0 + settings_.switch_margin);
  if (decided_ && keep) {
    exploit_length_ = std::min(exploit_length_ * 2, settings_.longest_exploit);
  } else {
    best_ = fastest;
    exploit_length_ = settings_.first_exploit;
  }
  decided_ = true;
  exploring_ = false;
  exploit_left_ = exploit_length_;
  for (auto& times : round_) {
    times.clear();
  }
  turn_in_round_ = 0;
}

std::string BucketLearner::describe(const LearnerTurn& turn) const {
  if (turn.phase == LearnerPhase::Exploit) {
    return fmt::format("dynamic exploit {} ({:.1f} us, check in {})", turn.candidate + 1, best_ns() / 1000,
                       exploit_left_);
  }
  return fmt::format("dynamic {} {} of {}", learner_phase_name(turn.phase), turn.candidate + 1, candidates());
}

BucketLearner& LearnerRegistry::learner(const LearnerKey& key, std::size_t candidates) {
  auto found = learners_.find(key);
  if (found != learners_.end() && found->second.candidates() != candidates) {
    learners_.erase(found);
    found = learners_.end();
  }
  if (found == learners_.end()) {
    found = learners_.emplace(key, BucketLearner(candidates, settings_)).first;
  }
  return found->second;
}

std::uint32_t size_bucket(std::uint64_t bytes) noexcept {
  return bytes <= 1 ? 0 : static_cast<std::uint32_t>(std::bit_width(bytes) - 1);
}

} // namespace commlens::runtime::tuning
