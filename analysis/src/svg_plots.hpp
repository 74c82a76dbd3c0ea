#pragma once
// Inline SVG drawings for the HTML report: plain markup, no scripts, no fonts or files fetched.
#include "commlens/analysis/report.hpp"

#include <string>

namespace commlens::analysis::detail {

std::string html_escape(std::string_view text);
// Horizontal bars: MPI time share of each rank.
std::string svg_time_shares(const std::vector<RankTime>& ranks);
// Vertical bars: calls per size bin of one function, labelled with the stable keys.
std::string svg_size_histogram(const FunctionStats& function);
// Square cells from sender (rows) to receiver (columns), darker for more bytes.
std::string svg_partner_heat_map(const std::vector<PartnerTraffic>& partners);
// Vertical bars, one per training step: its time, the part in MPI (mean of ranks) in red.
std::string svg_step_times(const TrainingSteps& steps);

} // namespace commlens::analysis::detail
