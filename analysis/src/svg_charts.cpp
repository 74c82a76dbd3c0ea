#include "svg_charts.hpp"

#include "commlens/analysis/size_bin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

namespace commlens::analysis::detail {
namespace {

using Out = fmt::memory_buffer;

template <typename... Args> void put(Out& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

constexpr int kWidth = 640;
constexpr int kLegendHeight = 20;
constexpr int kFontSize = 11;

void open_svg(Out& out, int width, int height, std::string_view label) {
  put(out,
      R"(<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {0} {1}" width="{0}" height="{1}" )"
      R"(role="img" aria-label="{2}" font-family="sans-serif" font-size="{3}">)",
      width, height, html_escape(label), kFontSize);
}

// Series names with their colours, in a row from `y` down; nothing for a single series.
void legend(Out& out, const std::vector<ChartSeries>& series, int x, int y = 0) {
  if (series.size() < 2)
    return;
  for (const auto& one : series) {
    put(out,
        R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text class="legend" x="{}" y="{}">{}</text>)",
        x, y + 4, one.color, x + 14, y + 13, html_escape(one.name));
    x += 24 + static_cast<int>(one.name.size()) * 7;
  }
}

double total(const ChartBar& bar, std::optional<double> cap = std::nullopt) {
  double sum = 0;
  for (const double part : bar.parts)
    sum += part;
  return cap ? std::min(sum, *cap) : sum;
}

double largest(const std::vector<ChartBar>& bars) {
  double most = 0;
  for (const auto& bar : bars)
    most = std::max(most, total(bar));
  return most;
}

} // namespace

std::string horizontal_bar_chart(const std::vector<ChartBar>& bars, const std::vector<ChartSeries>& series,
                                 const ChartAxes& axes) {
  constexpr int kLabels = 170, kRow = 20, kRight = 30, kAxis = 40;
  const int top = series.size() > 1 ? kLegendHeight + 6 : 6;
  const int plot = kWidth - kLabels - kRight;
  const int height = top + static_cast<int>(bars.size()) * kRow + kAxis;
  const auto axis = value_axis(largest(bars), axes.unit);
  const auto x_of = [&](double value) { return kLabels + value / axis.top * plot; };
  Out out;
  open_svg(out, kWidth, height, axes.value_title);
  legend(out, series, kLabels);
  const int bottom = top + static_cast<int>(bars.size()) * kRow;
  for (const auto& tick : axis.ticks)
    put(out,
        R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#ddd"/>)"
        R"(<text class="axis" x="{0:.1f}" y="{3}" text-anchor="middle">{4}</text>)",
        x_of(tick.value), top, bottom + 4, bottom + 16, html_escape(tick.label));
  put(out, R"(<text class="axis-title" x="{}" y="{}" text-anchor="middle">{}</text>)", kLabels + plot / 2,
      bottom + 34, html_escape(axes.value_title));
  for (std::size_t row = 0; row < bars.size(); ++row) {
    const auto& bar = bars[row];
    const int y = top + static_cast<int>(row) * kRow;
    put(out, R"(<text class="category" x="{}" y="{}" text-anchor="end">{}</text>)", kLabels - 6, y + 14,
        html_escape(bar.label));
    double x = kLabels;
    for (std::size_t part = 0; part < bar.parts.size() && part < series.size(); ++part) {
      const double width = bar.parts[part] / axis.top * plot;
      put(out, R"(<rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" fill="{}"><title>{}</title></rect>)", x,
          y + 3, width, kRow - 6, series[part].color, html_escape(bar.tooltip));
      x += width;
    }
  }
  put(out, R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#666"/></svg>)", kLabels, top, bottom);
  return fmt::to_string(out);
}

std::string column_chart(const std::vector<ChartBar>& bars, const std::vector<ChartSeries>& series,
                         const ChartAxes& axes, std::optional<double> cap) {
  constexpr int kLeft = 70, kRight = 12, kPlotHeight = 180, kBottom = 50, kMaxColumn = 28, kLabelsShown = 12;
  // The value axis's title in a row of its own (a long title turned upright would leave the chart),
  // the legend, then room for a cut column's value.
  constexpr int kTitleRow = 16;
  const int top = kTitleRow + (series.size() > 1 ? kLegendHeight : 0) + 16;
  const auto most = largest(bars);
  const bool cut = cap && most > *cap;
  const auto axis = value_axis(cut ? *cap : most, axes.unit);
  const int columns = std::max<int>(static_cast<int>(bars.size()), 1);
  const int column = std::clamp((kWidth - kLeft - kRight) / columns, 1, kMaxColumn);
  const int plot_width = column * columns;
  const int width = std::max(kLeft + plot_width + kRight, 360);
  const int bottom = top + kPlotHeight;
  const auto y_of = [&](double value) { return bottom - std::min(value, axis.top) / axis.top * kPlotHeight; };
  Out out;
  open_svg(out, width, bottom + kBottom, axes.value_title);
  legend(out, series, kLeft, kTitleRow);
  for (const auto& tick : axis.ticks)
    put(out,
        R"(<line x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}" stroke="#ddd"/>)"
        R"(<text class="axis" x="{3}" y="{4:.1f}" text-anchor="end">{5}</text>)",
        kLeft - 4, y_of(tick.value), kLeft + plot_width, kLeft - 6, y_of(tick.value) + 4,
        html_escape(tick.label));
  put(out, R"(<text class="axis-title" x="4" y="12">{}</text>)", html_escape(axes.value_title));
  const int every = (columns + kLabelsShown - 1) / kLabelsShown;
  for (std::size_t index = 0; index < bars.size(); ++index) {
    const auto& bar = bars[index];
    const int x = kLeft + static_cast<int>(index) * column;
    double base = 0;
    for (std::size_t part = 0; part < bar.parts.size() && part < series.size(); ++part) {
      const double low = y_of(base), high = y_of(base + bar.parts[part]);
      put(out, R"(<rect x="{}" y="{:.1f}" width="{}" height="{:.1f}" fill="{}"><title>{}</title></rect>)", x,
          high, std::max(column - 1, 1), low - high, series[part].color, html_escape(bar.tooltip));
      base += bar.parts[part];
    }
    if (cut && total(bar) > axis.top)
      put(out, R"(<text class="cut" x="{}" y="{}" text-anchor="start">&#8593; {}</text>)", x, top - 4,
          html_escape(format_value(total(bar), axes.unit)));
    if (static_cast<int>(index) % every == 0)
      put(out, R"(<text class="category" x="{}" y="{}" text-anchor="middle">{}</text>)", x + column / 2,
          bottom + 14, html_escape(bar.label));
  }
  put(out, R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#666"/>)", kLeft, bottom, kLeft + plot_width);
  put(out, R"(<text class="axis-title" x="{}" y="{}" text-anchor="middle">{}</text></svg>)", width / 2,
      bottom + 36, html_escape(axes.category_title));
  return fmt::to_string(out);
}

std::string partner_heat_map(const std::vector<PartnerTraffic>& partners) {
  std::set<int> ranks;
  std::uint64_t most = 1;
  for (const auto& partner : partners) {
    ranks.insert(partner.from);
    ranks.insert(partner.to);
    most = std::max(most, partner.bytes);
  }
  std::map<int, int> position;
  for (const int rank : ranks)
    position.emplace(rank, static_cast<int>(position.size()));
  const int count = static_cast<int>(ranks.size());
  const int cell = std::clamp(320 / std::max(count, 1), 3, 24);
  constexpr int kLeft = 64, kTop = 44, kScale = 90;
  const int side = count * cell;
  const int label_every = std::max(1, 14 / cell);
  Out out;
  open_svg(out, kLeft + side + kScale, kTop + side + 16, "bytes sent from rank to rank");
  put(out, R"(<text class="axis-title" x="{}" y="12" text-anchor="middle">receiver rank</text>)",
      kLeft + side / 2);
  put(out,
      R"svg(<text class="axis-title" transform="translate(14 {}) rotate(-90)" text-anchor="middle">sender rank</text>)svg",
      kTop + side / 2);
  for (const auto& [rank, index] : position) {
    if (index % label_every != 0)
      continue;
    put(out,
        R"(<text class="axis" x="{}" y="{}" text-anchor="middle">{}</text>)"
        R"(<text class="axis" x="{}" y="{}" text-anchor="end">{}</text>)",
        kLeft + index * cell + cell / 2, kTop - 6, rank, kLeft - 4, kTop + index * cell + cell / 2 + 4, rank);
  }
  put(out, R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)", kLeft, kTop, side,
      side);
  // Light to dark blue, linear in bytes.
  const auto colour = [](double intensity) {
    return fmt::format("rgb({},{},{})", int(235 - 227 * intensity), int(243 - 195 * intensity),
                       int(250 - 143 * intensity));
  };
  for (const auto& partner : partners)
    put(out,
        R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>rank {} to rank {}: {} messages, {})"
        R"({}</title></rect>)",
        kLeft + position[partner.to] * cell, kTop + position[partner.from] * cell, std::max(cell - 1, 1),
        std::max(cell - 1, 1), colour(double(partner.bytes) / double(most)), partner.from, partner.to,
        partner.messages, binary_size(partner.bytes),
        partner.nccl_bytes > 0 ? fmt::format(" ({} through NCCL)", binary_size(partner.nccl_bytes)) : "");
  // The colour scale: a column of steps from the most bytes down to none.
  const int scale_x = kLeft + side + 16;
  constexpr int kSteps = 10;
  const int step_height = std::max(side / kSteps, 4);
  for (int step = 0; step < kSteps; ++step)
    put(out, R"(<rect x="{}" y="{}" width="12" height="{}" fill="{}"/>)", scale_x, kTop + step * step_height,
        step_height, colour(1.0 - double(step) / (kSteps - 1)));
  put(out,
      R"(<text class="axis" x="{0}" y="{1}">{2}</text><text class="axis" x="{0}" y="{3}">0B</text>)"
      R"(<text class="axis" x="{0}" y="{4}">bytes</text></svg>)",
      scale_x + 16, kTop + 9, binary_size(most), kTop + kSteps * step_height, kTop - 6);
  return fmt::to_string(out);
}

} // namespace commlens::analysis::detail
