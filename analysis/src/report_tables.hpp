#pragma once
// The report model as titled tables of display strings, shared by the text, Markdown and HTML
// renderers so that each section is worded once. A table with `absent` set has no rows; the
// renderers gather those at the end in one line each: what the run did not record (with how to
// record it), and what it recorded but has nothing to show.
#include "commlens/analysis/report.hpp"

#include <string>
#include <vector>

namespace commlens::analysis::detail {

struct ReportTable {
  std::string title;
  std::string absent; // why the table has no rows; empty when it has some
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  std::string how_to_record; // with `absent`: the run did not record the data, and this records it
};

// Ranks, functions by time and the message sizes of the functions that move data: the text
// renderer draws these its own way.
std::vector<ReportTable> overview_tables(const Report& report);
// Every other section, in report order.
std::vector<ReportTable> detail_tables(const Report& report);
// The training-steps section's tables (training_steps_tables.cpp); one table saying why when absent.
std::vector<ReportTable> training_steps_tables(const TrainingSteps& steps);
// A section of typed rows, each number written in its column's unit.
ReportTable table_of(std::string title, const OptionalSection& section);

// "Not recorded: MPI_T performance variables (how); ..." over the tables the run did not record,
// or "Nothing to show: Concurrent MPI calls across threads (why); ..." over those it recorded
// empty; empty when there are none of the kind.
std::string not_recorded_line(const std::vector<ReportTable>& tables);
std::string nothing_to_show_line(const std::vector<ReportTable>& tables);

// "trace mode, 4 ranks, 2.345 s": what the run was, for the header.
std::string run_summary(const Report& report);
// Findings, worded once for every format.
std::string finding_cost(const Finding& finding);      // "412.3 ms, 18.2% of the ranks' time"
std::string finding_threshold(const Finding& finding); // "waiting time ...: 18.2% (threshold 5.0%)"
// "No rule reached its threshold" or the count, for the findings heading.
std::string findings_heading(const FindingsSection& findings);

std::string percent(double share);
// "rank 1, phase 2, NVTX range train"; empty without a filter.
std::string filter_description(const ReportFilter& filter);
// The warning every format shows for a run with missing ranks; empty when none are missing.
std::string missing_ranks_warning(const Report& report);
// The warning every format shows at its top when trace events or calls were lost; empty when none.
std::string losses_warning(const Report& report);
// Which ranks' time in MPI adds up threads instead of measuring wall time; empty when none.
std::string thread_sum_note(const Report& report);
// Whether a function moves data (its histogram says something): calls with bytes in some bin.
bool moves_data(const FunctionStats& function);

} // namespace commlens::analysis::detail
