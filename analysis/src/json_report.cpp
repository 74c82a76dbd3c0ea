#include "commlens/analysis/report_format.hpp"
#include "report_tables.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <variant>

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
          {"mpi_thread_sum_ns", rank.mpi_thread_sum_ns},
          {"mpi_ns_summed_over_threads", rank.mpi_ns_summed_over_threads},
          {"threads", rank.threads},
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

json absence_json(const Absence& absence) {
  if (absence.empty())
    return nullptr;
  return {{"reason", absence.reason},
          {"how_to_record", absence.how_to_record.empty() ? json(nullptr) : json(absence.how_to_record)}};
}

json cell_json(const Cell& cell) {
  if (const auto* text = std::get_if<std::string>(&cell))
    return *text;
  if (const auto* integer = std::get_if<std::int64_t>(&cell))
    return *integer;
  if (const auto* real = std::get_if<double>(&cell))
    return *real;
  return nullptr;
}

// Rows as objects keyed by column, each key naming its unit ("time_ns"); numbers stay numbers.
json optional_section_json(const OptionalSection& section) {
  if (!section.absent.empty())
    return {{"absent", absence_json(section.absent)}};
  json rows = json::array();
  for (const auto& row : section.rows) {
    json object = json::object();
    for (std::size_t column = 0; column < row.size() && column < section.columns.size(); ++column)
      object[section.columns[column].key] = cell_json(row[column]);
    rows.push_back(std::move(object));
  }
  return {{"rows", std::move(rows)}};
}

json finding_json(const Finding& finding) {
  return {{"id", finding.id},
          {"rule", finding.rule},
          {"title", finding.title},
          {"cost_ns", finding.cost_ns},
          {"cost_share", finding.cost_share},
          {"cost_base", finding.cost_base},
          {"measure", finding.measure},
          {"measured", finding.measured},
          {"threshold", finding.threshold},
          {"unit", unit_name(finding.unit)},
          {"evidence", finding.evidence},
          {"query", finding.query},
          {"view", finding.view},
          {"advice", finding.advice}};
}

json findings_json(const FindingsSection& section) {
  json findings = json::array();
  for (const auto& finding : section.findings)
    findings.push_back(finding_json(finding));
  return findings;
}

json training_steps_json(const TrainingSteps& section) {
  if (!section.absent.empty())
    return {{"absent", section.absent}};
  json steps = json::array();
  for (const auto& s : section.steps)
    steps.push_back({{"phase", s.phase},
                     {"ranks", s.ranks},
                     {"start_ns", s.start_ns},
                     {"duration_ns", s.duration_ns},
                     {"mpi_ns", s.mpi_ns},
                     {"calls", s.calls},
                     {"allreduce_calls", s.allreduce_calls},
                     {"allreduce_bytes", s.allreduce_bytes},
                     {"nccl_gpu_ns", s.nccl_gpu_ns},
                     {"gpu", s.gpu_ranks == 0 ? json(nullptr)
                                              : json{{"ranks", s.gpu_ranks},
                                                     {"compute_ns", s.gpu_compute_ns},
                                                     {"communication_ns", s.gpu_communication_ns},
                                                     {"overlapped_ns", s.gpu_overlapped_ns},
                                                     {"exposed_ns", s.gpu_exposed_ns},
                                                     {"idle_ns", s.gpu_idle_ns}}}});
  json functions = json::array();
  for (const auto& f : section.functions)
    functions.push_back({{"name", f.name},
                         {"calls", f.calls},
                         {"bytes_sent", f.bytes_sent},
                         {"bytes_recv", f.bytes_recv},
                         {"time_total_ns", f.time_total_ns},
                         {"calls_per_step", f.calls_per_step},
                         {"bytes_sent_per_step", f.bytes_sent_per_step},
                         {"bytes_recv_per_step", f.bytes_recv_per_step},
                         {"time_per_step_ns", f.time_per_step_ns},
                         {"min_calls", f.min_calls},
                         {"max_calls", f.max_calls}});
  json sizes = json::array();
  for (const auto& b : section.collective_sizes)
    sizes.push_back({{"function", b.function},
                     {"key", b.key},
                     {"size_bin", b.size_bin},
                     {"label", b.label},
                     {"calls_per_step", b.calls_per_step},
                     {"bytes_per_step", b.bytes_per_step},
                     {"time_per_step_ns", b.time_per_step_ns},
                     {"gpu_time_per_step_ns", b.gpu_time_per_step_ns},
                     {"exact_sizes", section.exact_sizes ? json(b.exact_sizes) : json(nullptr)}});
  const auto table = [](const auto& headers, const auto& rows) {
    return headers.empty() ? json(nullptr) : json{{"headers", headers}, {"rows", rows}};
  };
  return {{"steps", std::move(steps)},
          {"rank_steps", section.rank_steps},
          {"step_time_ns",
           {{"median", section.median_ns},
            {"p25", section.p25_ns},
            {"p75", section.p75_ns},
            {"min", section.min_ns},
            {"max", section.max_ns}}},
          {"median_mpi_ns", section.median_mpi_ns},
          {"nonblocking_allreduce", section.nonblocking_allreduce
                                        ? json{{"in_flight_ns", section.in_flight_ns},
                                               {"in_flight_outside_mpi_ns", section.in_flight_outside_mpi_ns}}
                                        : json(nullptr)},
          {"mpi_share", section.mpi_share},
          {"marked_by", section.marked_by},
          {"warmup_steps", section.warmup_steps},
          {"gpu_breakdown", section.gpu_steps.empty()
                                ? json{{"absent", section.gpu_absent}}
                                : json{{"steps", section.gpu_steps},
                                       {"median_compute_ns", section.median_gpu_compute_ns},
                                       {"median_communication_ns", section.median_gpu_communication_ns},
                                       {"median_overlapped_ns", section.median_gpu_overlapped_ns},
                                       {"median_exposed_ns", section.median_gpu_exposed_ns},
                                       {"median_idle_ns", section.median_gpu_idle_ns}}},
          {"median_nccl_gpu_ns", section.median_nccl_gpu_ns},
          {"copies_per_step", section.copies_per_step},
          {"profiler_ns_per_runtime_call", section.profiler_ns_per_call},
          {"functions", std::move(functions)},
          {"collective_sizes", std::move(sizes)},
          {"pvars", table(section.pvar_headers, section.pvar_rows)},
          {"cuda_copies", table(section.copy_headers, section.copy_rows)}};
}

json detail_sections_json(const Report& report) {
  json communicators = json::array();
  for (const auto& c : report.communicators)
    communicators.push_back({{"id", std::to_string(c.id)}, // above 2^53 for NCCL's: a string
                             {"label", c.label},
                             {"size", c.size},
                             {"calls", c.calls},
                             {"bytes", c.bytes},
                             {"time_total_ns", c.time_total_ns}});
  json partners = json::array();
  for (const auto& p : report.partners)
    partners.push_back({{"from", p.from},
                        {"to", p.to},
                        {"messages", p.messages},
                        {"bytes", p.bytes},
                        {"nccl_messages", p.nccl_messages},
                        {"nccl_bytes", p.nccl_bytes}});
  json collectives = json::array();
  for (const auto& c : report.collectives)
    collectives.push_back({{"rank", c.rank},
                           {"mpi_calls", c.mpi_calls},
                           {"mpi_bytes", c.mpi_bytes},
                           {"nccl_calls", c.nccl_calls},
                           {"nccl_bytes", c.nccl_bytes}});
  json queue_times = json::array();
  for (const auto& q : report.queue_times)
    queue_times.push_back({{"function", q.function},
                           {"operations", q.operations},
                           {"median_ns", q.median_ns},
                           {"p95_ns", q.p95_ns},
                           {"max_ns", q.max_ns}});
  json concurrency = json::array();
  for (const auto& c : report.concurrency)
    concurrency.push_back({{"rank", c.rank},
                           {"threads", c.threads},
                           {"max_in_flight", c.max_in_flight},
                           {"overlapped_ns", c.overlapped_ns}});
  json threads = json::array();
  for (const auto& t : report.threads)
    threads.push_back({{"rank", t.rank},
                       {"thread", t.thread},
                       {"calls", t.calls},
                       {"mpi_ns", t.mpi_ns},
                       {"mpi_share", optional_value(t.mpi_share)}});
  json phases = json::array();
  for (const auto& p : report.phases)
    phases.push_back({{"phase", p.phase},
                      {"ranks", p.ranks},
                      {"start_ns", p.start_ns},
                      {"end_ns", optional_value(p.end_ns)},
                      {"calls", p.calls},
                      {"bytes", p.bytes},
                      {"time_total_ns", p.time_total_ns},
                      {"top_functions", p.top_functions}});
  json nvtx_phases = json::array();
  for (const auto& p : report.nvtx_phases) {
    json phase = {
        {"path", p.path}, {"ranks", p.ranks}, {"ranges", p.ranges}, {"range_time_ns", p.range_time_ns}};
    if (report.nvtx_calls_placed)
      phase.update({{"calls", p.calls},
                    {"bytes", p.bytes},
                    {"time_total_ns", p.time_total_ns},
                    {"top_functions", p.top_functions}});
    nvtx_phases.push_back(std::move(phase));
  }
  return {{"communicators", std::move(communicators)},
          {"partners", std::move(partners)},
          {"collectives", std::move(collectives)},
          {"queue_times", std::move(queue_times)},
          {"queue_times_absent", absence_json(report.queue_times_absent)},
          {"concurrency", std::move(concurrency)},
          {"concurrency_absent", absence_json(report.concurrency_absent)},
          {"threads", std::move(threads)},
          {"threads_absent", absence_json(report.threads_absent)},
          {"run_start_ns", report.run_start_ns},
          {"phases", std::move(phases)},
          {"nvtx_phases", std::move(nvtx_phases)},
          {"nvtx_phases_absent", absence_json(report.nvtx_phases_absent)},
          {"nvtx_calls_placed", report.nvtx_calls_placed},
          {"mpit", optional_section_json(report.mpit)},
          {"cuda_copies", optional_section_json(report.cuda_copies)},
          {"runtime_decisions", optional_section_json(report.runtime_decisions)},
          {"nccl", optional_section_json(report.nccl)},
          {"training_steps", training_steps_json(report.training_steps)}};
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

  json document = {
      {"database", report.database_path},
      {"schema_version", report.schema_version},
      {"mode", report.trace_mode ? "trace" : "summary"},
      {"findings", findings_json(report.findings)},
      {"findings_not_analysed", report.findings.not_analysed},
      {"filter",
       {{"rank", optional_value(report.filter.rank)},
        {"phase", optional_value(report.filter.phase)},
        {"nvtx_range", optional_value(report.filter.nvtx_range)}}},
      {"run", std::move(run)},
      {"missing_ranks", report.missing_ranks},
      {"ranks", std::move(ranks)},
      {"mpi_time_across_ranks_ns", spread_json(report.mpi_time_spread)},
      {"mpi_share_across_ranks", spread_json(report.mpi_share_spread)},
      {"functions", std::move(functions)},
      {"dropped", {{"events", report.dropped_events}, {"summary_overflow", report.summary_overflow}}}};
  json warnings = json::array();
  for (const auto& warning : {detail::missing_ranks_warning(report), detail::losses_warning(report),
                              detail::thread_sum_note(report)})
    if (!warning.empty())
      warnings.push_back(warning);
  document["warnings"] = std::move(warnings);
  document.update(detail_sections_json(report));
  if (!report.jobs.empty())
    document["jobs"] = report.jobs;
  // Strings come from the database and may hold invalid UTF-8: replaced, never an exception.
  return document.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace commlens::analysis
