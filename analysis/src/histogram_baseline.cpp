#include "commlens/analysis/histogram_baseline.hpp"

#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/report.hpp"
#include "commlens/analysis/size_bin.hpp"
#include "report_queries.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace commlens::analysis {
namespace {

constexpr std::string_view kFormat = "commlens-histograms";
// 1: histograms only; 2: and the findings.
constexpr int kFormatVersion = 2;

Regression histogram_regression(RegressionKind kind, const std::string& function, const std::string& key,
                                std::uint64_t baseline, std::uint64_t current) {
  return {kind, function, key, baseline, current, 0.0, 0.0, ""};
}

bool beyond(std::uint64_t baseline, std::uint64_t current, double tolerance) {
  const double change = std::fabs(double(current) - double(baseline));
  return change > tolerance * double(baseline);
}

double parse_fraction(std::string_view text) {
  std::string value(text);
  const bool percent = !value.empty() && value.back() == '%';
  if (percent)
    value.pop_back();
  std::size_t used = 0;
  double fraction = std::stod(value, &used);
  if (used != value.size() || fraction < 0)
    throw std::invalid_argument("not a non-negative number");
  return percent ? fraction / 100.0 : fraction;
}

void compare_bins(const std::string& function, const std::map<std::string, HistogramBin>& baseline,
                  const std::map<std::string, HistogramBin>& current, const Tolerance& tolerance,
                  std::vector<Regression>& regressions) {
  for (const auto& [key, bin] : current) {
    const auto before = baseline.find(key);
    if (before == baseline.end()) {
      regressions.push_back(histogram_regression(RegressionKind::NewBin, function, key, 0, bin.calls));
      continue;
    }
    if (beyond(before->second.calls, bin.calls, tolerance.count))
      regressions.push_back(
          histogram_regression(RegressionKind::CountChanged, function, key, before->second.calls, bin.calls));
    if (beyond(before->second.bytes, bin.bytes, tolerance.bytes))
      regressions.push_back(
          histogram_regression(RegressionKind::BytesChanged, function, key, before->second.bytes, bin.bytes));
  }
  for (const auto& [key, bin] : baseline)
    if (!current.contains(key))
      regressions.push_back(histogram_regression(RegressionKind::MissingBin, function, key, bin.calls, 0));
}

} // namespace

Histograms histograms_of(const Database& database) {
  Histograms histograms;
  for (const auto& function : detail::query_function_stats(database, {}))
    for (const auto& bin : function.size_histogram)
      histograms[function.name][bin.key] = {bin.calls, bin.bytes_sent + bin.bytes_recv};
  return histograms;
}

Baseline baseline_of(const Database& database) {
  Baseline baseline{histograms_of(database), BaselineFindings()};
  for (const auto& finding : build_report(database).findings.findings)
    (*baseline.findings)[finding.id] = {finding.cost_share, finding.title};
  return baseline;
}

std::string baseline_to_json(const Baseline& baseline) {
  nlohmann::json functions = nlohmann::json::object();
  for (const auto& [function, bins] : baseline.histograms)
    for (const auto& [key, bin] : bins)
      functions[function][key] = {{"calls", bin.calls}, {"bytes", bin.bytes}};
  nlohmann::json document = {{"format", kFormat}, {"version", kFormatVersion}, {"functions", functions}};
  if (baseline.findings) {
    nlohmann::json findings = nlohmann::json::object();
    for (const auto& [id, finding] : *baseline.findings)
      findings[id] = {{"cost_share", finding.cost_share}, {"title", finding.title}};
    document["findings"] = std::move(findings);
  }
  // Strings come from the database and may hold invalid UTF-8: replaced, never an exception.
  return document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Baseline load_baseline(const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file)
    throw AnalysisError(path.string() + ": cannot open baseline");
  try {
    const auto document = nlohmann::json::parse(file);
    if (document.value("format", "") != kFormat)
      throw AnalysisError(path.string() + ": not a commlens histogram baseline (commlens histogram --save)");
    if (document.value("version", 0) > kFormatVersion)
      throw AnalysisError(path.string() + ": baseline format is newer than this commlens supports");
    Baseline baseline;
    for (const auto& [function, bins] : document.at("functions").items())
      for (const auto& [key, bin] : bins.items())
        baseline.histograms[function][key] = {bin.at("calls").get<std::uint64_t>(),
                                              bin.at("bytes").get<std::uint64_t>()};
    if (document.contains("findings")) {
      baseline.findings.emplace();
      for (const auto& [id, finding] : document.at("findings").items())
        (*baseline.findings)[id] = {finding.at("cost_share").get<double>(), finding.value("title", "")};
    }
    return baseline;
  } catch (const nlohmann::json::exception& error) {
    throw AnalysisError(path.string() + ": malformed baseline (" + error.what() + ")");
  }
}

Tolerance parse_tolerance(std::string_view specification) {
  Tolerance tolerance;
  while (!specification.empty()) {
    const auto comma = specification.find(',');
    const auto item = specification.substr(0, comma);
    specification = comma == std::string_view::npos ? std::string_view{} : specification.substr(comma + 1);
    const auto equals = item.find('=');
    const auto metric = item.substr(0, equals);
    try {
      if (equals == std::string_view::npos)
        throw std::invalid_argument("no value");
      const double fraction = parse_fraction(item.substr(equals + 1));
      if (metric == "count")
        tolerance.count = fraction;
      else if (metric == "bytes")
        tolerance.bytes = fraction;
      else if (metric == "finding")
        tolerance.finding = fraction;
      else
        throw AnalysisError(fmt::format("--tolerance: unknown metric '{}' (count, bytes, finding)", metric));
    } catch (const std::invalid_argument&) {
      throw AnalysisError(fmt::format("--tolerance: '{}' is not METRIC=FRACTION or METRIC=PERCENT%", item));
    }
  }
  return tolerance;
}

std::vector<Regression> compare_histograms(const Histograms& baseline, const Histograms& current,
                                           const Tolerance& tolerance) {
  std::vector<Regression> regressions;
  static const std::map<std::string, HistogramBin> kNoBins;
  for (const auto& [function, bins] : current) {
    const auto before = baseline.find(function);
    if (before == baseline.end())
      regressions.push_back(histogram_regression(RegressionKind::NewFunction, function, "", 0, 0));
    compare_bins(function, before == baseline.end() ? kNoBins : before->second, bins, tolerance, regressions);
  }
  for (const auto& [function, bins] : baseline)
    if (!current.contains(function))
      regressions.push_back(histogram_regression(RegressionKind::MissingFunction, function, "", 0, 0));
  return regressions;
}

std::vector<Regression> compare_findings(const BaselineFindings& baseline, const BaselineFindings& current,
                                         const Tolerance& tolerance) {
  std::vector<Regression> regressions;
  for (const auto& [id, finding] : current) {
    const auto before = baseline.find(id);
    if (before == baseline.end())
      regressions.push_back({.kind = RegressionKind::NewFinding,
                             .subject = id,
                             .key = "",
                             .baseline = 0,
                             .current = 0,
                             .baseline_share = 0,
                             .current_share = finding.cost_share,
                             .title = finding.title});
    else if (finding.cost_share > before->second.cost_share * (1.0 + tolerance.finding))
      regressions.push_back({.kind = RegressionKind::GrownFinding,
                             .subject = id,
                             .key = "",
                             .baseline = 0,
                             .current = 0,
                             .baseline_share = before->second.cost_share,
                             .current_share = finding.cost_share,
                             .title = finding.title});
  }
  return regressions;
}

std::string describe(const Regression& regression) {
  const auto bin = size_bin_label_of_key(regression.key);
  switch (regression.kind) {
  case RegressionKind::NewFunction:
    return "new function";
  case RegressionKind::MissingFunction:
    return "function no longer called";
  case RegressionKind::NewBin:
    return fmt::format("new size bin {} ({} calls)", bin, regression.current);
  case RegressionKind::MissingBin:
    return fmt::format("size bin {} gone (had {} calls)", bin, regression.baseline);
  case RegressionKind::CountChanged:
    return fmt::format("calls in {} changed {} -> {}", bin, regression.baseline, regression.current);
  case RegressionKind::BytesChanged:
    return fmt::format("bytes in {} changed {} -> {}", bin, regression.baseline, regression.current);
  case RegressionKind::NewFinding:
    return fmt::format("new finding: {} ({:.1f}% of the ranks' time)", regression.title,
                       regression.current_share * 100.0);
  case RegressionKind::GrownFinding:
    return fmt::format("finding grew from {:.1f}% to {:.1f}% of the ranks' time: {}",
                       regression.baseline_share * 100.0, regression.current_share * 100.0, regression.title);
  }
  return "";
}

} // namespace commlens::analysis
