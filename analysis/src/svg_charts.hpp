#pragma once
// Inline SVG charts for the HTML report: plain markup, no scripts, nothing fetched. Every chart has
// a value axis with ticks in its unit and a title on each axis; it is drawn at a fixed size and
// scales down with the page (viewBox), never up.
#include "chart_axis.hpp"
#include "commlens/analysis/report.hpp"

#include <optional>
#include <string>
#include <vector>

namespace commlens::analysis::detail {

struct ChartSeries {
  std::string name;
  std::string color; // CSS colour
};

struct ChartBar {
  std::string label;         // the category: "rank 2", "MPI_Allreduce", "12"
  std::vector<double> parts; // one value per series, stacked
  std::string tooltip;
};

struct ChartAxes {
  Unit unit = Unit::Count;
  std::string value_title;    // "time in MPI", with the unit the ticks show
  std::string category_title; // "rank", "step (MPI_Pcontrol phase)"
};

// One row per bar, stacked left to right, the value axis below.
std::string horizontal_bar_chart(const std::vector<ChartBar>& bars, const std::vector<ChartSeries>& series,
                                 const ChartAxes& axes);
// One column per bar, stacked upwards, the value axis on the left. Columns above `cap` are cut at
// it and their value written above them, so that one large value does not flatten the rest.
std::string column_chart(const std::vector<ChartBar>& bars, const std::vector<ChartSeries>& series,
                         const ChartAxes& axes, std::optional<double> cap = std::nullopt);
// Bytes from sender (rows) to receiver (columns), darker for more, with the colour scale beside it.
std::string partner_heat_map(const std::vector<PartnerTraffic>& partners);

} // namespace commlens::analysis::detail
