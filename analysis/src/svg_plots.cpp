#include "svg_plots.hpp"

#include "commlens/analysis/size_bin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

namespace commlens::analysis::detail {
namespace {

constexpr int kBarHeight = 18;
constexpr int kLabelWidth = 90;
constexpr int kPlotWidth = 420;
constexpr int kColumnWidth = 36;
constexpr int kHistogramHeight = 140;
constexpr int kCell = 22;

} // namespace

std::string html_escape(std::string_view text) {
  std::string escaped;
  for (const char c : text) {
    switch (c) {
    case '&':
      escaped += "&amp;";
      break;
    case '<':
      escaped += "&lt;";
      break;
    case '>':
      escaped += "&gt;";
      break;
    case '"':
      escaped += "&quot;";
      break;
    default:
      escaped += c;
    }
  }
  return escaped;
}

std::string svg_time_shares(const std::vector<RankTime>& ranks) {
  fmt::memory_buffer out;
  const int height = static_cast<int>(ranks.size()) * kBarHeight + 4;
  fmt::format_to(std::back_inserter(out),
                 R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}">)svg",
                 kLabelWidth + kPlotWidth + 60, height);
  int y = 2;
  for (const auto& rank : ranks) {
    const double share = std::clamp(rank.mpi_share.value_or(0.0), 0.0, 1.0);
    fmt::format_to(
        std::back_inserter(out),
        R"svg(<text x="0" y="{}" font-size="12">rank {}</text><rect x="{}" y="{}" width="{}" height="{}" fill="#c44"/>)svg"
        R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="#ddd"/><text x="{}" y="{}" font-size="12">{:.1f}%</text>)svg",
        y + 13, rank.rank, kLabelWidth, y, share * kPlotWidth, kBarHeight - 4,
        kLabelWidth + share * kPlotWidth, y, (1.0 - share) * kPlotWidth, kBarHeight - 4,
        kLabelWidth + kPlotWidth + 4, y + 13, share * 100.0);
    y += kBarHeight;
  }
  fmt::format_to(std::back_inserter(out), "</svg>");
  return fmt::to_string(out);
}

std::string svg_size_histogram(const FunctionStats& function) {
  fmt::memory_buffer out;
  std::uint64_t most = 1;
  for (const auto& bin : function.size_histogram)
    most = std::max(most, bin.calls);
  const int width = static_cast<int>(function.size_histogram.size()) * kColumnWidth + 10;
  fmt::format_to(std::back_inserter(out),
                 R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}">)svg", width,
                 kHistogramHeight + 30);
  int x = 5;
  for (const auto& bin : function.size_histogram) {
    const double bar = double(bin.calls) / double(most) * kHistogramHeight;
    fmt::format_to(
        std::back_inserter(out),
        R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="#37a"><title>{} {}: {} calls</title></rect>)svg"
        R"svg(<text x="{}" y="{}" font-size="10">{}</text>)svg",
        x, kHistogramHeight - bar, kColumnWidth - 6, bar, html_escape(bin.key), html_escape(bin.label),
        bin.calls, x, kHistogramHeight + 14, html_escape(bin.key));
    x += kColumnWidth;
  }
  fmt::format_to(std::back_inserter(out), "</svg>");
  return fmt::to_string(out);
}

std::string svg_partner_heat_map(const std::vector<PartnerTraffic>& partners) {
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
  const int side = static_cast<int>(ranks.size()) * kCell;
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out),
                 R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}">)svg", side + 40,
                 side + 40);
  for (const auto& [rank, index] : position)
    fmt::format_to(
        std::back_inserter(out),
        R"svg(<text x="{}" y="12" font-size="10">{}</text><text x="0" y="{}" font-size="10">{}</text>)svg",
        40 + index * kCell + 4, rank, 40 + index * kCell + 14, rank);
  for (const auto& partner : partners) {
    const double intensity = double(partner.bytes) / double(most);
    fmt::format_to(std::back_inserter(out),
                   R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="rgb(200,{},{})">)svg"
                   R"svg(<title>{} to {}: {} messages, {}</title></rect>)svg",
                   40 + position[partner.to] * kCell, 40 + position[partner.from] * kCell, kCell - 2,
                   kCell - 2, int(230 - 200 * intensity), int(230 - 200 * intensity), partner.from,
                   partner.to, partner.messages, binary_size(partner.bytes));
  }
  fmt::format_to(std::back_inserter(out), "</svg>");
  return fmt::to_string(out);
}

std::string svg_step_times(const TrainingSteps& steps) {
  constexpr int kStepsShown = 200;
  constexpr int kAxisWidth = 64; // room for "1234.5 ms" left of the bars
  constexpr int kTop = 8;        // half a label above the highest tick
  const auto shown = std::min<std::size_t>(steps.steps.size(), kStepsShown);
  // Wide bars for a few steps, at least 3 pixels for many.
  const int step_width = std::clamp(kPlotWidth / static_cast<int>(shown), 3, 24);
  std::int64_t longest = 1;
  for (std::size_t i = 0; i < shown; ++i)
    longest = std::max(longest, steps.steps[i].duration_ns);
  const double longest_ms = double(longest) / 1e6;
  const int bottom = kTop + kHistogramHeight;
  const int width = kAxisWidth + std::max(static_cast<int>(shown) * step_width, kPlotWidth) + 4;
  fmt::memory_buffer out;
  fmt::format_to(
      std::back_inserter(out),
      R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif">)svg",
      width, bottom + 36);
  // Value axis: 0, half and the longest step, in milliseconds.
  for (const double share : {0.0, 0.5, 1.0}) {
    const double y = bottom - share * kHistogramHeight;
    fmt::format_to(std::back_inserter(out),
                   R"svg(<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="#bbb"/>)svg"
                   R"svg(<text x="{}" y="{:.1f}" font-size="11" text-anchor="end">{:.1f} ms</text>)svg",
                   kAxisWidth - 4, y, width - 2, y, kAxisWidth - 6, y + 4, share * longest_ms);
  }
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& step = steps.steps[i];
    const double total = double(kHistogramHeight) * double(step.duration_ns) / double(longest);
    const double mpi = std::min(total, double(kHistogramHeight) * double(step.mpi_ns) / double(longest));
    const int x = kAxisWidth + static_cast<int>(i) * step_width;
    fmt::format_to(
        std::back_inserter(out),
        R"svg(<rect x="{}" y="{:.1f}" width="{}" height="{:.1f}" fill="#ddd"><title>phase {}: {:.3f} ms, {:.3f} ms in MPI</title></rect>)svg"
        R"svg(<rect x="{}" y="{:.1f}" width="{}" height="{:.1f}" fill="#c44"/>)svg",
        x, bottom - total, step_width - 1, total - mpi, step.phase, double(step.duration_ns) / 1e6,
        double(step.mpi_ns) / 1e6, x, bottom - mpi, step_width - 1, mpi);
  }
  fmt::format_to(
      std::back_inserter(out),
      R"svg(<text x="{}" y="{}" font-size="12">phases {} to {}: step time (grey), time in MPI (red)</text></svg>)svg",
      kAxisWidth, bottom + 18, steps.steps.front().phase, steps.steps[shown - 1].phase);
  return fmt::to_string(out);
}

} // namespace commlens::analysis::detail
