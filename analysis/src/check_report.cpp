// The two renderings of a `commlens check` verdict: Markdown for CI logs, JUnit XML for CI UIs.
#include "commlens/analysis/histogram_baseline.hpp"
#include "svg_plots.hpp"

#include <fmt/format.h>

#include <iterator>
#include <map>
#include <set>

namespace commlens::analysis {

std::string render_check_markdown(const std::vector<Regression>& regressions, const Histograms& current) {
  fmt::memory_buffer out;
  if (regressions.empty()) {
    fmt::format_to(std::back_inserter(out), "## commlens check: OK\n\n{} functions match the baseline.\n",
                   current.size());
    return fmt::to_string(out);
  }
  fmt::format_to(std::back_inserter(out),
                 "## commlens check: REGRESSION\n\n{} differences beyond tolerance.\n\n", regressions.size());
  fmt::format_to(std::back_inserter(out), "| function | change |\n|---|---|\n");
  for (const auto& regression : regressions)
    fmt::format_to(std::back_inserter(out), "| {} | {} |\n", regression.function, describe(regression));
  return fmt::to_string(out);
}

std::string render_check_junit(const std::vector<Regression>& regressions, const Histograms& baseline,
                               const Histograms& current) {
  std::map<std::string, std::string> failures; // function -> its regressions, "" when it passed
  for (const auto& [function, bins] : baseline)
    failures[function];
  for (const auto& [function, bins] : current)
    failures[function];
  std::set<std::string> failed;
  for (const auto& regression : regressions) {
    failures[regression.function] += describe(regression) + "; ";
    failed.insert(regression.function);
  }
  fmt::memory_buffer out;
  fmt::format_to(
      std::back_inserter(out),
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"commlens check\" tests=\"{}\" "
      "failures=\"{}\">\n",
      failures.size(), failed.size());
  for (const auto& [function, failure] : failures) {
    fmt::format_to(std::back_inserter(out), "  <testcase classname=\"histograms\" name=\"{}\">",
                   detail::html_escape(function));
    if (!failure.empty())
      fmt::format_to(std::back_inserter(out), "<failure message=\"{}\"/>", detail::html_escape(failure));
    fmt::format_to(std::back_inserter(out), "</testcase>\n");
  }
  fmt::format_to(std::back_inserter(out), "</testsuite>\n");
  return fmt::to_string(out);
}

} // namespace commlens::analysis
