// The GPU runtime against its baseline in an A/B run (COMMLENS_RUNTIME=ab: calls alternate between
// the runtime and the baseline, so both ran the same calls under the same conditions). Per function
// and message-size bin, the difference of their mean times over all the bin's calls is what turning
// the runtime on for every call would save (or lose), per training step where the run has steps.
#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/size_bin.hpp"
#include "findings_engine.hpp"

#include <fmt/format.h>

#include <bit>

namespace commlens::analysis::detail {
namespace {

constexpr std::string_view kAbSql = R"sql(
SELECT function_id, bytes, decision, COUNT(*), SUM(end_ns - start_ns) FROM runtime_ops
WHERE decision IN ('runtime', 'ab_baseline') AND (?1 IS NULL OR rank = ?1)
GROUP BY function_id, bytes, decision
)sql";

struct Side {
  std::uint64_t calls = 0;
  std::int64_t time_ns = 0;
  double mean() const { return calls > 0 ? double(time_ns) / double(calls) : 0.0; }
};

struct Bin {
  Side runtime;
  Side baseline;
  double saving_ns() const {
    return (baseline.mean() - runtime.mean()) * double(runtime.calls + baseline.calls);
  }
};

int size_bin_of(std::int64_t bytes) {
  return bytes <= 0 ? kZeroBytesBin : static_cast<int>(std::bit_width(static_cast<std::uint64_t>(bytes))) - 1;
}

std::string bin_line(int size_bin, const Bin& bin) {
  return fmt::format("{}: runtime {} a call, baseline {} ({} + {} calls)", size_bin_label(size_bin),
                     human_duration(bin.runtime.mean()), human_duration(bin.baseline.mean()),
                     bin.runtime.calls, bin.baseline.calls);
}

void add(const FindingContext& context, std::string_view rule, const std::string& function, double total_ns,
         std::vector<std::string> lines, int function_id, FindingsSection& section) {
  const double measured = context.share_of_ranks_time(total_ns);
  if (!reaches_threshold(rule, measured))
    return;
  const auto& steps = context.report.training_steps;
  const bool per_step = steps.absent.empty() && steps.rank_steps > 0;
  const auto amount = per_step
                          ? fmt::format("{} per step and rank", human_duration(total_ns / steps.rank_steps))
                          : human_duration(total_ns);
  auto finding = make_finding(context, rule, function, static_cast<std::int64_t>(total_ns), measured);
  finding.title =
      rule == "runtime-saves"
          ? fmt::format("The GPU runtime would save {} in {}", amount, function)
          : fmt::format("The GPU runtime is slower than its baseline in {}: it loses {}", function, amount);
  finding.evidence = std::move(lines);
  finding.query =
      fmt::format("SELECT decision, bytes, COUNT(*) AS calls, AVG(end_ns - start_ns) AS mean_ns FROM "
                  "runtime_ops WHERE function_id = {} AND decision IN ('runtime', 'ab_baseline') GROUP "
                  "BY bytes, decision ORDER BY bytes, decision",
                  function_id);
  finding.view = "Compare: the mpi and runtime implementations of this run";
  finding.advice =
      rule == "runtime-saves"
          ? "Turn the runtime on for this function (COMMLENS_RUNTIME=on; "
            "COMMLENS_RUNTIME_COLLECTIVES names the collectives it takes)."
          : "Keep these sizes on the baseline: tune the runtime on this machine (commlens tune) or "
            "leave the function out of COMMLENS_RUNTIME_COLLECTIVES.";
  section.findings.push_back(std::move(finding));
}

} // namespace

void find_runtime_savings(const FindingContext& context, FindingsSection& section) {
  if (!context.database.has_rows("runtime_ops"))
    return;
  std::map<int, std::map<int, Bin>> functions; // function -> size bin -> both sides
  auto query = context.database.prepare(kAbSql);
  query.bind(1, context.report.filter.rank ? std::optional<std::int64_t>(*context.report.filter.rank)
                                           : std::nullopt);
  while (query.step()) {
    auto& bin = functions[static_cast<int>(query.integer(0))][size_bin_of(query.integer(1))];
    auto& side = query.text(2) == "runtime" ? bin.runtime : bin.baseline;
    side.calls += static_cast<std::uint64_t>(query.integer(3));
    side.time_ns += query.integer(4);
  }
  for (const auto& [function_id, bins] : functions) {
    double saved = 0, lost = 0;
    std::vector<std::string> saving_lines, losing_lines;
    for (const auto& [size_bin, bin] : bins) {
      if (bin.runtime.calls == 0 || bin.baseline.calls == 0)
        continue; // not an A/B comparison
      const double saving = bin.saving_ns();
      (saving >= 0 ? saved : lost) += std::abs(saving);
      (saving >= 0 ? saving_lines : losing_lines).push_back(bin_line(size_bin, bin));
    }
    const auto name = context.function_name(function_id);
    add(context, "runtime-saves", name, saved, std::move(saving_lines), function_id, section);
    add(context, "runtime-slower", name, lost, std::move(losing_lines), function_id, section);
  }
}

} // namespace commlens::analysis::detail
