#pragma once
// Message-size histograms as a CI baseline: `commlens histogram --save` stores them under stable
// keys (function name, size-bin key "2^k"), `commlens check` compares a run against them.
#include "commlens/analysis/database.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::analysis {

struct HistogramBin {
  std::uint64_t calls = 0;
  std::uint64_t bytes = 0; // sent + received
};
// function name -> size-bin key -> bin
using Histograms = std::map<std::string, std::map<std::string, HistogramBin>>;

Histograms histograms_of(const Database& database);
std::string histograms_to_json(const Histograms& histograms);
// Throws AnalysisError naming `path` when it is missing or not a baseline this build wrote.
Histograms load_histograms(const std::filesystem::path& path);

// Allowed relative change per metric (0.05: 5%); 0 requires equality.
struct Tolerance {
  double count = 0;
  double bytes = 0;
};
// "count=5%,bytes=0.1"; throws AnalysisError on anything else.
Tolerance parse_tolerance(std::string_view specification);

enum class RegressionKind { NewFunction, MissingFunction, NewBin, MissingBin, CountChanged, BytesChanged };

struct Regression {
  RegressionKind kind;
  std::string function;
  std::string key; // empty for whole-function regressions
  std::uint64_t baseline = 0;
  std::uint64_t current = 0;
};

std::vector<Regression> compare_histograms(const Histograms& baseline, const Histograms& current,
                                           const Tolerance& tolerance);
std::string describe(const Regression& regression);

// For CI logs: a Markdown verdict with a table of regressions.
std::string render_check_markdown(const std::vector<Regression>& regressions, const Histograms& current);
// JUnit XML: one test case per function of the baseline and the run, failed when it regressed.
std::string render_check_junit(const std::vector<Regression>& regressions, const Histograms& baseline,
                               const Histograms& current);

} // namespace commlens::analysis
