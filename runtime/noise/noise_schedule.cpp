#include "noise/noise_schedule.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace commlens::runtime::noise {

namespace {

constexpr double kMaxHz = 1000;
constexpr double kMaxDelayMs = 1000;

std::optional<double> parse_number(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<int> parse_rank(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

// "0-3,6" -> 0 1 2 3 6 (sorted, without repeats).
std::optional<std::vector<int>> parse_ranks(std::string_view text) {
  std::vector<int> ranks;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const std::size_t dash = item.find('-');
    const auto first = parse_rank(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : parse_rank(item.substr(dash + 1));
    if (!first || !last || *last < *first || *last - *first > 1 << 20) {
      return std::nullopt;
    }
    for (int rank = *first; rank <= *last; ++rank) {
      ranks.push_back(rank);
    }
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) {
      return std::nullopt; // a trailing comma
    }
  }
  std::ranges::sort(ranks);
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

} // namespace

std::optional<NoiseSettings> parse_noise(std::string_view text, std::string* error) {
  const std::size_t first = text.find(':');
  const std::size_t second = first == std::string_view::npos ? first : text.find(':', first + 1);
  if (first == std::string_view::npos) {
    *error = "expected HZ:MAX_MS[:RANKS]";
    return std::nullopt;
  }
  NoiseSettings settings;
  const auto hz = parse_number(text.substr(0, first));
  const auto max_ms =
      parse_number(text.substr(first + 1, second == std::string_view::npos ? second : second - first - 1));
  if (!hz || *hz <= 0 || *hz > kMaxHz) {
    *error = "HZ: expected a number above 0 and at most 1000";
    return std::nullopt;
  }
  if (!max_ms || *max_ms < 0 || *max_ms > kMaxDelayMs) {
    *error = "MAX_MS: expected a number from 0 to 1000";
    return std::nullopt;
  }
  settings.hz = *hz;
  settings.max_ms = *max_ms;
  if (second != std::string_view::npos) {
    auto ranks = parse_ranks(text.substr(second + 1));
    if (!ranks || ranks->empty()) {
      *error = "RANKS: expected a comma list of ranks and ranges (0-3,6)";
      return std::nullopt;
    }
    settings.ranks = std::move(*ranks);
  }
  return settings;
}

bool applies_to(const NoiseSettings& settings, int world_rank) noexcept {
  return settings.ranks.empty() || std::ranges::binary_search(settings.ranks, world_rank);
}

std::string describe(const NoiseSettings& settings) {
  std::string ranks = settings.ranks.empty() ? "every rank" : "ranks ";
  for (std::size_t i = 0; i < settings.ranks.size(); ++i) {
    ranks += (i > 0 ? "," : "") + std::to_string(settings.ranks[i]);
  }
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "%g Hz, 0-%g ms, ", settings.hz, settings.max_ms);
  return numbers + ranks;
}

NoiseSchedule::NoiseSchedule(const NoiseSettings& settings, std::uint64_t seed, std::uint64_t start_ns)
    : period_ns_(1e9 / settings.hz), max_ns_(settings.max_ms * 1e6), start_ns_(start_ns), random_(seed),
      phase_(std::uniform_real_distribution<double>(0, 1)(random_)) {
  next_due_ns_ = start_ns_ + static_cast<std::uint64_t>(phase_ * period_ns_);
}

std::uint64_t NoiseSchedule::delay_ns() {
  return static_cast<std::uint64_t>(std::uniform_real_distribution<double>(0, max_ns_)(random_));
}

std::uint64_t NoiseSchedule::owed(std::uint64_t now_ns) {
  std::uint64_t owed = 0;
  while (now_ns >= next_due_ns_) {
    // A delay due more than a period ago fell while the rank ran code the runtime does not reach
    // (the application's own work, where it would have delayed that): it is skipped, not piled up.
    const std::uint64_t delay = delay_ns();
    owed += now_ns - next_due_ns_ <= static_cast<std::uint64_t>(period_ns_) ? delay : 0;
    ++next_index_;
    next_due_ns_ =
        start_ns_ + static_cast<std::uint64_t>((phase_ + static_cast<double>(next_index_)) * period_ns_);
  }
  return owed;
}

} // namespace commlens::runtime::noise
