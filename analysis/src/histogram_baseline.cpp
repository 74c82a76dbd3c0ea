#include "commlens/analysis/histogram_baseline.hpp"

#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/size_bin.hpp"
#include "report_queries.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace commlens::analysis {
namespace {

constexpr std::string_view kFormat = "commlens-histograms";
constexpr int kFormatVersion = 1;

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
      regressions.push_back({RegressionKind::NewBin, function, key, 0, bin.calls});
      continue;
    }
    if (beyond(before->second.calls, bin.calls, tolerance.count))
      regressions.push_back({RegressionKind::CountChanged, function, key, before->second.calls, bin.calls});
    if (beyond(before->second.bytes, bin.bytes, tolerance.bytes))
      regressions.push_back({RegressionKind::BytesChanged, function, key, before->second.bytes, bin.bytes});
  }
  for (const auto& [key, bin] : baseline)
    if (!current.contains(key))
      regressions.push_back({RegressionKind::MissingBin, function, key, bin.calls, 0});
}

} // namespace

Histograms histograms_of(const Database& database) {
  Histograms histograms;
  for (const auto& function : detail::query_function_stats(database, {}))
    for (const auto& bin : function.size_histogram)
      histograms[function.name][bin.key] = {bin.calls, bin.bytes_sent + bin.bytes_recv};
  return histograms;
}

std::string histograms_to_json(const Histograms& histograms) {
  nlohmann::json functions = nlohmann::json::object();
  for (const auto& [function, bins] : histograms)
    for (const auto& [key, bin] : bins)
      functions[function][key] = {{"calls", bin.calls}, {"bytes", bin.bytes}};
  const nlohmann::json document = {
      {"format", kFormat}, {"version", kFormatVersion}, {"functions", functions}};
  // Strings come from the database and may hold invalid UTF-8: replaced, never an exception.
  return document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Histograms load_histograms(const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file)
    throw AnalysisError(path.string() + ": cannot open baseline");
  try {
    const auto document = nlohmann::json::parse(file);
    if (document.value("format", "") != kFormat)
      throw AnalysisError(path.string() + ": not a commlens histogram baseline (commlens histogram --save)");
    if (document.value("version", 0) > kFormatVersion)
      throw AnalysisError(path.string() + ": baseline format is newer than this commlens supports");
    Histograms histograms;
    for (const auto& [function, bins] : document.at("functions").items())
      for (const auto& [key, bin] : bins.items())
        histograms[function][key] = {bin.at("calls").get<std::uint64_t>(),
                                     bin.at("bytes").get<std::uint64_t>()};
    return histograms;
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
      else
        throw AnalysisError(fmt::format("--tolerance: unknown metric '{}' (count, bytes)", metric));
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
      regressions.push_back({RegressionKind::NewFunction, function, "", 0, 0});
    compare_bins(function, before == baseline.end() ? kNoBins : before->second, bins, tolerance, regressions);
  }
  for (const auto& [function, bins] : baseline)
    if (!current.contains(function))
      regressions.push_back({RegressionKind::MissingFunction, function, "", 0, 0});
  return regressions;
}

std::string describe(const Regression& regression) {
  switch (regression.kind) {
  case RegressionKind::NewFunction:
    return "new function";
  case RegressionKind::MissingFunction:
    return "function no longer called";
  case RegressionKind::NewBin:
    return fmt::format("new size bin {} ({} calls)", regression.key, regression.current);
  case RegressionKind::MissingBin:
    return fmt::format("size bin {} gone (had {} calls)", regression.key, regression.baseline);
  case RegressionKind::CountChanged:
    return fmt::format("calls in {} changed {} -> {}", regression.key, regression.baseline,
                       regression.current);
  case RegressionKind::BytesChanged:
    return fmt::format("bytes in {} changed {} -> {}", regression.key, regression.baseline,
                       regression.current);
  }
  return "";
}

} // namespace commlens::analysis
