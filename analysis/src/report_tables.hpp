#pragma once
// The report model as titled tables of display strings, shared by the text, Markdown and HTML
// renderers so that each section is worded once. A table with `absent` set has no rows and shows
// that one line instead.
#include "commlens/analysis/report.hpp"

#include <string>
#include <vector>

namespace commlens::analysis::detail {

struct ReportTable {
  std::string title;
  std::string absent;
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
};

// Ranks, functions by time and the histograms: the text renderer draws these its own way.
std::vector<ReportTable> summary_tables(const Report& report);
// Every other section, in report order.
std::vector<ReportTable> detail_tables(const Report& report);
// The training-steps section's tables (training_steps_tables.cpp); one table saying why when absent.
std::vector<ReportTable> training_steps_tables(const TrainingSteps& steps);

std::string percent(double share);
// "rank 1, phase 2, NVTX range train"; empty without a filter.
std::string filter_description(const ReportFilter& filter);
// The warning every format shows for a run with missing ranks; empty when none are missing.
std::string missing_ranks_warning(const Report& report);
// The warning every format shows at its top when trace events or calls were lost; empty when none.
std::string losses_warning(const Report& report);
// Which ranks' time in MPI adds up threads instead of measuring wall time; empty when none.
std::string thread_sum_note(const Report& report);

} // namespace commlens::analysis::detail
