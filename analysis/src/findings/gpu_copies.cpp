// GPU copy paths that cost more than they should:
//   pageable staging: copies between a GPU and pageable host memory go through the driver's bounce
//     buffer at a fraction of the link's speed and cannot overlap with work;
//   host-staged copies between GPUs of one host: made by MPI or NCCL calls (the library staging device
//     buffers through the host), or by the program inside its training steps (staging for an MPI that
//     is not CUDA-aware), on a host where several ranks have GPUs, which a peer or CUDA IPC path could
//     move directly.
#include "../gpu/copy_timing.hpp"
#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/size_bin.hpp"
#include "findings_engine.hpp"

#include <fmt/format.h>

#include <optional>

namespace commlens::analysis::detail {
namespace {

// Times on the GPU. Where only a sample of the copies was timed there (copy_timing.hpp), the
// times are the sample's scaled by all bytes over the sample's bytes: the copies' time at the
// sample's bandwidth.
struct CopyTotals {
  std::uint64_t copies = 0;
  std::uint64_t bytes = 0;
  std::int64_t time_ns = 0;
  std::int64_t inside_calls_ns = 0; // of time_ns, copies an MPI or NCCL call made
};

std::string bandwidth(const CopyTotals& totals) {
  return totals.time_ns > 0
             ? format_value(double(totals.bytes) / double(totals.time_ns), Unit::GigabytesPerSecond)
             : "-";
}

std::string totals_line(const CopyTotals& totals) {
  return fmt::format("{} copies, {} in {} ({}); {} of that time inside MPI or NCCL calls", totals.copies,
                     binary_size(totals.bytes), human_duration(double(totals.time_ns)), bandwidth(totals),
                     human_duration(double(totals.inside_calls_ns)));
}

CopyTotals read_totals(const FindingContext& context, const std::string& where) {
  const std::string gpu_ns = copy_gpu_ns(context.database);
  auto query = context.database.prepare(
      fmt::format("SELECT COALESCE(SUM({3}), 0), COALESCE(SUM(bytes), 0), COALESCE(SUM({0}), 0), "
                  "COALESCE(SUM(CASE WHEN mpi_call_id IS NOT NULL THEN {0} END), 0), COALESCE(SUM({1}), 0) "
                  "FROM cuda_copies WHERE (?1 IS NULL OR rank = ?1) AND {2}",
                  gpu_ns, copy_timed_bytes(context.database), where, copy_count(context.database)));
  query.bind(1, context.report.filter.rank ? std::optional<std::int64_t>(*context.report.filter.rank)
                                           : std::nullopt);
  query.step();
  const auto bytes = query.integer(1), timed_bytes = query.integer(4);
  const double scale = timed_bytes > 0 ? double(bytes) / double(timed_bytes) : 0.0;
  return {static_cast<std::uint64_t>(query.integer(0)), static_cast<std::uint64_t>(bytes),
          static_cast<std::int64_t>(double(query.integer(2)) * scale),
          static_cast<std::int64_t>(double(query.integer(3)) * scale)};
}

// A finding of `rule` about the copies `where` selects, when their time reaches its threshold,
// with their totals as its first evidence.
std::optional<Finding> copies_finding(const FindingContext& context, std::string_view rule,
                                      const std::string& where, CopyTotals& totals) {
  totals = read_totals(context, where);
  const double measured = context.share_of_ranks_time(double(totals.time_ns));
  if (totals.copies == 0 || !reaches_threshold(rule, measured))
    return std::nullopt;
  auto finding = make_finding(context, rule, "host_staged", totals.time_ns, measured);
  finding.evidence = {totals_line(totals)};
  return finding;
}

void find_pageable_staging(const FindingContext& context, FindingsSection& section) {
  constexpr std::string_view kPageable =
      "path = 'host_staged' AND (src_kind = 'pageable' OR dst_kind = 'pageable')";
  CopyTotals totals;
  auto found = copies_finding(context, "pageable-staging", std::string(kPageable), totals);
  if (!found)
    return;
  auto& finding = *found;
  finding.title = fmt::format("Copies from or to pageable host memory take {} at {}",
                              human_duration(double(totals.time_ns)), bandwidth(totals));
  finding.query =
      fmt::format("SELECT rank, copy_kind, SUM({}) AS copies, SUM(bytes) AS bytes, SUM({}) * 1.0 / "
                  "SUM({}) AS gb_per_s FROM cuda_copies WHERE {} GROUP BY rank, copy_kind",
                  copy_count(context.database), copy_timed_bytes(context.database),
                  copy_gpu_ns(context.database), kPageable);
  finding.view = "Copy paths: host_staged";
  finding.advice =
      "Pin the host buffers (cudaHostAlloc or cudaHostRegister; in PyTorch pin_memory=True or "
      "tensor.pin_memory()): pinned copies run at the link's speed and can overlap with kernels.";
  section.findings.push_back(std::move(finding));
}

// Ranks on hosts where at least two ranks have a GPU: their GPUs could exchange directly.
std::string ranks_sharing_hosts_with_gpus() {
  return "rank IN (SELECT rank FROM ranks WHERE gpu_uuid IS NOT NULL AND host IN (SELECT host FROM ranks "
         "WHERE gpu_uuid IS NOT NULL GROUP BY host HAVING COUNT(*) > 1))";
}

// Copies the program made itself during the training loop (from the first step's start to the last
// step's end, across ranks).
std::string inside_steps(const TrainingSteps& steps) {
  if (steps.steps.empty())
    return "0";
  std::int64_t end = 0;
  for (const auto& step : steps.steps)
    end = std::max(end, step.start_ns + step.duration_ns);
  return fmt::format("(start_ns >= {} AND start_ns < {})", steps.steps.front().start_ns, end);
}

void find_host_staged_exchanges(const FindingContext& context, FindingsSection& section) {
  const auto where =
      fmt::format("path = 'host_staged' AND {} AND (mpi_call_id IS NOT NULL OR {})",
                  ranks_sharing_hosts_with_gpus(), inside_steps(context.report.training_steps));
  CopyTotals totals;
  auto found = copies_finding(context, "host-staged-copies", where, totals);
  if (!found)
    return;
  auto& finding = *found;
  finding.title = fmt::format("GPUs of one host exchange data through host memory: {} of copies at {}",
                              human_duration(double(totals.time_ns)), bandwidth(totals));
  finding.evidence.push_back("the ranks of these copies share their host with other ranks that have a GPU");
  finding.query = fmt::format(
      "SELECT c.rank, f.name, c.copy_kind, SUM({}) AS copies, SUM(c.bytes) AS bytes FROM cuda_copies c "
      "LEFT JOIN mpi_calls m ON m.id = c.mpi_call_id LEFT JOIN functions f ON f.id = m.function_id "
      "WHERE c.path = 'host_staged' GROUP BY 1, 2, 3",
      copy_count(context.database, "c."));
  finding.view = "Copy paths: host_staged; Timeline: the copies row of a rank";
  finding.advice =
      "Let the GPUs exchange directly: a CUDA-aware MPI, COMMLENS_RUNTIME=on (CUDA IPC between the "
      "GPUs of one host) or NCCL; a host-staged exchange crosses PCIe twice and waits for both "
      "copies.";
  section.findings.push_back(std::move(finding));
}

} // namespace

void find_gpu_copy_problems(const FindingContext& context, FindingsSection& section) {
  if (!context.database.has_rows("cuda_copies"))
    return; // a run without GPUs: nothing to say, and nothing missing
  find_pageable_staging(context, section);
  find_host_staged_exchanges(context, section);
}

} // namespace commlens::analysis::detail
