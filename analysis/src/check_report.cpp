// The two renderings of a `commlens check` verdict: Markdown for CI logs, JUnit XML for CI UIs.
#include "chart_axis.hpp"
#include "commlens/analysis/histogram_baseline.hpp"

#include <fmt/format.h>

#include <iterator>
#include <map>
#include <set>

namespace commlens::analysis {
namespace {

bool about_findings(const Regression& regression) {
  return regression.kind == RegressionKind::NewFinding || regression.kind == RegressionKind::GrownFinding;
}

template <typename... Args>
void put(fmt::memory_buffer& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

void write_findings_note(fmt::memory_buffer& out, const Baseline& baseline, const Baseline& current) {
  if (!baseline.findings) {
    put(out,
        "\nThe baseline holds no findings (it was saved by an older commlens), so they were not checked: "
        "save it again with `commlens histogram --save`.\n");
    return;
  }
  std::vector<std::string> resolved;
  for (const auto& [id, finding] : *baseline.findings)
    if (!current.findings || !current.findings->contains(id))
      resolved.push_back(id);
  for (const auto& id : resolved)
    put(out, "\nResolved since the baseline: `{}`.\n", id);
}

} // namespace

std::string render_check_markdown(const std::vector<Regression>& regressions, const Baseline& baseline,
                                  const Baseline& current) {
  fmt::memory_buffer out;
  if (regressions.empty()) {
    put(out, "## commlens check: OK\n\n{} functions match the baseline{}.\n", current.histograms.size(),
        baseline.findings ? fmt::format(", and no finding is new or grew beyond the tolerance ({} findings)",
                                        current.findings ? current.findings->size() : 0)
                          : "");
  } else {
    put(out, "## commlens check: REGRESSION\n\n{} differences beyond tolerance.\n\n", regressions.size());
    put(out, "| function or finding | change |\n|---|---|\n");
    for (const auto& regression : regressions)
      put(out, "| {} | {} |\n", regression.subject, describe(regression));
  }
  write_findings_note(out, baseline, current);
  return fmt::to_string(out);
}

std::string render_check_junit(const std::vector<Regression>& regressions, const Baseline& baseline,
                               const Baseline& current) {
  // (class, name) -> its regressions, "" when it passed
  std::map<std::pair<std::string, std::string>, std::string> cases;
  for (const auto* side : {&baseline, &current}) {
    for (const auto& [function, bins] : side->histograms)
      cases[{"histograms", function}];
    if (side->findings && baseline.findings)
      for (const auto& [id, finding] : *side->findings)
        cases[{"findings", id}];
  }
  std::set<std::pair<std::string, std::string>> failed;
  for (const auto& regression : regressions) {
    const std::pair<std::string, std::string> key{about_findings(regression) ? "findings" : "histograms",
                                                  regression.subject};
    cases[key] += describe(regression) + "; ";
    failed.insert(key);
  }
  fmt::memory_buffer out;
  put(out,
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"commlens check\" tests=\"{}\" "
      "failures=\"{}\">\n",
      cases.size(), failed.size());
  for (const auto& [key, failure] : cases) {
    put(out, "  <testcase classname=\"{}\" name=\"{}\">", key.first, detail::html_escape(key.second));
    if (!failure.empty())
      put(out, "<failure message=\"{}\"/>", detail::html_escape(failure));
    put(out, "</testcase>\n");
  }
  put(out, "</testsuite>\n");
  return fmt::to_string(out);
}

} // namespace commlens::analysis
