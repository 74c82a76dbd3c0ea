#include "commlens/analysis/comparison.hpp"
#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/size_bin.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iterator>

namespace commlens::analysis {
namespace {

std::string ratio_text(const std::optional<double>& ratio) {
  return ratio ? fmt::format("{:.2f}x", *ratio) : "-";
}

std::string figure_value(const ComparedStepFigure& figure, double value) {
  if (figure.unit == "ns")
    return human_duration(value);
  if (figure.unit == "bytes")
    return binary_size(static_cast<std::uint64_t>(std::llround(value)));
  if (figure.unit == "share")
    return fmt::format("{:.1f}%", value * 100.0);
  auto text = fmt::format("{:.2f}", value);
  text.erase(text.find_last_not_of('0') + 1);
  return text.back() == '.' ? text.substr(0, text.size() - 1) : text;
}

void write_steps(fmt::memory_buffer& out, const Comparison& comparison) {
  if (!comparison.steps_note.empty())
    fmt::format_to(std::back_inserter(out), "\n  training steps: {}\n", comparison.steps_note);
  if (comparison.steps.empty())
    return;
  fmt::format_to(std::back_inserter(out),
                 "\n  Training steps, per step and rank\n  {:<44} {:>14} {:>14} {:>8}\n", "figure", "A", "B",
                 "B/A");
  for (const auto& figure : comparison.steps)
    fmt::format_to(std::back_inserter(out), "  {:<44} {:>14} {:>14} {:>8}\n", figure.figure,
                   figure_value(figure, figure.a), figure_value(figure, figure.b), ratio_text(figure.ratio));
}

} // namespace

std::string render_comparison_text(const Comparison& comparison) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "commlens compare\n  A: {}\n  B: {}\n", comparison.label_a,
                 comparison.label_b);
  if (!comparison.note.empty())
    fmt::format_to(std::back_inserter(out), "  note: {}\n", comparison.note);
  const auto* median = comparison.per_call_times ? "median" : "mean";
  fmt::format_to(std::back_inserter(out),
                 "\n  {:<22} {:<18} {:>9} {:>9} {:>11} {:>11} {:>11} {:>11} {:>8} {:>8}\n", "function",
                 "size", "calls A", "calls B", "time A", "time B", fmt::format("{} A", median),
                 fmt::format("{} B", median), "B/A", "p95 B/A");
  for (const auto& bin : comparison.bins)
    fmt::format_to(std::back_inserter(out),
                   "  {:<22} {:<18} {:>9} {:>9} {:>11} {:>11} {:>11} {:>11} {:>8} {:>8}\n", bin.function,
                   size_bin_label(bin.size_bin), bin.a.calls, bin.b.calls,
                   human_duration(double(bin.a.time_total_ns)), human_duration(double(bin.b.time_total_ns)),
                   human_duration(double(bin.a.median_ns)), human_duration(double(bin.b.median_ns)),
                   ratio_text(bin.median_ratio), ratio_text(bin.p95_ratio));
  write_steps(out, comparison);
  return fmt::to_string(out);
}

std::string render_comparison_json(const Comparison& comparison) {
  using nlohmann::json;
  const auto side = [](const ComparedSide& s) {
    return json{{"calls", s.calls},
                {"time_total_ns", s.time_total_ns},
                {"median_ns", s.median_ns},
                {"p95_ns", s.p95_ns ? json(*s.p95_ns) : json(nullptr)}};
  };
  const auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json bins = json::array();
  for (const auto& bin : comparison.bins)
    bins.push_back({{"function", bin.function},
                    {"key", bin.key},
                    {"size_bin", bin.size_bin},
                    {"a", side(bin.a)},
                    {"b", side(bin.b)},
                    {"median_ratio", optional(bin.median_ratio)},
                    {"p95_ratio", optional(bin.p95_ratio)}});
  json steps = json::array();
  for (const auto& figure : comparison.steps)
    steps.push_back({{"figure", figure.figure},
                     {"unit", figure.unit},
                     {"a", figure.a},
                     {"b", figure.b},
                     {"ratio", optional(figure.ratio)}});
  const json document = {{"a", comparison.label_a},
                         {"b", comparison.label_b},
                         {"per_call_times", comparison.per_call_times},
                         {"note", comparison.note},
                         {"bins", std::move(bins)},
                         {"training_steps", std::move(steps)},
                         {"training_steps_note", comparison.steps_note}};
  // Strings come from the database and may hold invalid UTF-8: replaced, never an exception.
  return document.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace commlens::analysis
