#include "commlens/analysis/report_format.hpp"

#include <nlohmann/json.hpp>

namespace commlens::analysis {
namespace {

using nlohmann::json;

template <typename Value> json optional_value(const std::optional<Value>& value) {
  return value ? json(*value) : json(nullptr);
}

json spread_json(const std::optional<RankSpread>& spread) {
  if (!spread)
    return nullptr;
  return {{"min", spread->min},           {"mean", spread->mean},         {"max", spread->max},
          {"min_rank", spread->min_rank}, {"max_rank", spread->max_rank}, {"imbalance", spread->imbalance}};
}

json rank_json(const RankTime& rank) {
  return {{"rank", rank.rank},
          {"host", rank.host},
          {"application_ns", optional_value(rank.application_ns)},
          {"mpi_ns", rank.mpi_ns},
          {"mpi_share", optional_value(rank.mpi_share)},
          {"calls", rank.calls},
          {"dropped_events", rank.dropped_events},
          {"summary_overflow", rank.summary_overflow},
          {"finalized", rank.finalized}};
}

json function_json(const FunctionStats& function) {
  json histogram = json::array();
  for (const auto& bin : function.size_histogram)
    histogram.push_back({{"key", bin.key},
                         {"label", bin.label},
                         {"size_bin", bin.size_bin},
                         {"calls", bin.calls},
                         {"bytes_sent", bin.bytes_sent},
                         {"bytes_recv", bin.bytes_recv},
                         {"time_total_ns", bin.time_total_ns}});
  return {{"name", function.name},
          {"family", function.family},
          {"calls", function.calls},
          {"bytes_sent", function.bytes_sent},
          {"bytes_recv", function.bytes_recv},
          {"time_total_ns", function.time_total_ns},
          {"time_min_ns", function.time_min_ns},
          {"time_max_ns", function.time_max_ns},
          {"share_of_mpi_time", function.share_of_mpi_time},
          {"size_histogram", std::move(histogram)}};
}

} // namespace

std::string render_json_report(const Report& report) {
  json run = json::object();
  for (const auto& [key, value] : report.run)
    run[key] = value;
  json ranks = json::array();
  for (const auto& rank : report.ranks)
    ranks.push_back(rank_json(rank));
  json functions = json::array();
  for (const auto& function : report.functions)
    functions.push_back(function_json(function));

  const json document = {
      {"database", report.database_path},
      {"schema_version", report.schema_version},
      {"filter",
       {{"rank", optional_value(report.filter.rank)}, {"phase", optional_value(report.filter.phase)}}},
      {"run", std::move(run)},
      {"ranks", std::move(ranks)},
      {"mpi_time_across_ranks_ns", spread_json(report.mpi_time_spread)},
      {"mpi_share_across_ranks", spread_json(report.mpi_share_spread)},
      {"functions", std::move(functions)},
      {"dropped", {{"events", report.dropped_events}, {"summary_overflow", report.summary_overflow}}}};
  return document.dump(2) + "\n";
}

} // namespace commlens::analysis
