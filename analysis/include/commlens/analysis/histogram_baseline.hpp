#pragma once
// A CI baseline: a run's message-size histograms under stable keys (function name, size-bin key
// "2^k") and its findings under their stable ids (`commlens histogram --save` stores both);
// `commlens check` compares a run against it.
#include "commlens/analysis/database.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
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

// What a baseline keeps of a finding: its cost as a share of the ranks' time, and its title.
struct BaselineFinding {
  double cost_share = 0;
  std::string title;
};
using BaselineFindings = std::map<std::string, BaselineFinding>; // by finding id

struct Baseline {
  Histograms histograms;
  // Empty for a baseline saved before commlens had findings: then they are not checked.
  std::optional<BaselineFindings> findings;
};

Histograms histograms_of(const Database& database);
// Histograms and findings (the findings come from the whole report, so this reads every section).
Baseline baseline_of(const Database& database);
std::string baseline_to_json(const Baseline& baseline);
// Throws AnalysisError naming `path` when it is missing or not a baseline this build wrote.
Baseline load_baseline(const std::filesystem::path& path);

// Allowed relative change per metric (0.05: 5%); 0 requires equality. A finding may grow by
// `finding` before it is a regression: its cost is time, which varies from run to run.
struct Tolerance {
  double count = 0;
  double bytes = 0;
  double finding = 0.25;
};
// "count=5%,bytes=0.1,finding=50%"; throws AnalysisError on anything else.
Tolerance parse_tolerance(std::string_view specification);

enum class RegressionKind {
  NewFunction,
  MissingFunction,
  NewBin,
  MissingBin,
  CountChanged,
  BytesChanged,
  NewFinding,
  GrownFinding
};

struct Regression {
  RegressionKind kind;
  std::string subject; // the function, or the finding's id
  std::string key;     // the size bin's key; empty for whole-function regressions and findings
  std::uint64_t baseline = 0;
  std::uint64_t current = 0;
  double baseline_share = 0; // findings: cost over the ranks' time
  double current_share = 0;
  std::string title; // findings: what the finding says
};

std::vector<Regression> compare_histograms(const Histograms& baseline, const Histograms& current,
                                           const Tolerance& tolerance);
// New findings, and findings whose cost share grew by more than the tolerance. A finding that went
// away is no regression.
std::vector<Regression> compare_findings(const BaselineFindings& baseline, const BaselineFindings& current,
                                         const Tolerance& tolerance);
std::string describe(const Regression& regression);

// For CI logs: a Markdown verdict with a table of regressions, and the findings the run no longer
// has.
std::string render_check_markdown(const std::vector<Regression>& regressions, const Baseline& baseline,
                                  const Baseline& current);
// JUnit XML: one test case per function and per finding of the baseline and the run, failed when it
// regressed.
std::string render_check_junit(const std::vector<Regression>& regressions, const Baseline& baseline,
                               const Baseline& current);

} // namespace commlens::analysis
