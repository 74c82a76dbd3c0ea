#pragma once
// Renderings of the report model. Text is for people (fixed-width tables); JSON is for scripts and
// CI, with the stable size-bin keys and raw nanoseconds and bytes; Markdown for CI logs and pull
// requests; HTML with plots for sharing.
#include "commlens/analysis/report.hpp"

#include <cstddef>
#include <string>

namespace commlens::analysis {

struct TextReportOptions {
  // The short form `commlens run` prints: run header, spread across ranks, the top functions and
  // drops, without the per-rank table and the histograms.
  bool brief = false;
  std::size_t brief_functions = 5;
};

std::string render_text_report(const Report& report, const TextReportOptions& options = {});
std::string render_json_report(const Report& report);
std::string render_markdown_report(const Report& report);
// One self-contained file: inline style and SVG plots, nothing fetched over the network.
std::string render_html_report(const Report& report);

// "1.234 s", "12.3 ms", "4.5 us", "800 ns".
std::string human_duration(double nanoseconds);

} // namespace commlens::analysis
