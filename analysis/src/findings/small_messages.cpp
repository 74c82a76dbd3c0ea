// Small-message storms: a function that moves data making many calls of less than 1 KiB, whose
// time (mostly per-call latency, whatever they move) is a share of the run worth aggregating away.
#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/size_bin.hpp"
#include "findings_engine.hpp"

#include <fmt/format.h>

#include <set>

namespace commlens::analysis::detail {
namespace {

constexpr int kSmallBelowBin = 10; // bins below 2^10: less than 1 KiB, zero bytes included
constexpr double kStormCallsPerRank = 1000;

// Families whose calls carry messages; a function that never moved a byte (MPI_Barrier) has none.
const std::set<std::string> kMessageFamilies = {"p2p", "collective",      "neighborhood",
                                                "rma", "nccl_collective", "nccl_p2p"};

} // namespace

void find_small_message_storms(const FindingContext& context, FindingsSection& section) {
  const auto& report = context.report;
  const double ranks = double(std::max<std::size_t>(report.ranks.size(), 1));
  for (const auto& function : report.functions) {
    if (!kMessageFamilies.contains(function.family) || function.bytes_sent + function.bytes_recv == 0)
      continue;
    std::uint64_t calls = 0;
    std::int64_t time_ns = 0;
    const SizeBinStats* busiest = nullptr;
    for (const auto& bin : function.size_histogram) {
      if (bin.size_bin >= kSmallBelowBin)
        continue;
      calls += bin.calls;
      time_ns += bin.time_total_ns;
      if (!busiest || bin.calls > busiest->calls)
        busiest = &bin;
    }
    if (double(calls) / ranks < kStormCallsPerRank)
      continue;
    // What the calls cost however little they move: their time, less what the wait-state rules
    // found them waiting for (a late partner, a late rank), in the small calls' share of the
    // function's time. Fewer, larger messages would not save that.
    const double waiting = function.time_total_ns > 0 ? double(context.waiting_in(function.function_id)) *
                                                            double(time_ns) / double(function.time_total_ns)
                                                      : 0.0;
    const auto cost_ns = std::max<std::int64_t>(0, time_ns - static_cast<std::int64_t>(waiting));
    const double measured = context.share_of_ranks_time(double(cost_ns));
    if (!reaches_threshold("small-messages", measured))
      continue;
    auto finding = make_finding(context, "small-messages", function.name, cost_ns, measured);
    finding.title = fmt::format("Small-message storm in {}: {} calls of less than 1 KiB take {}",
                                function.name, calls, human_duration(double(cost_ns)));
    finding.evidence = {fmt::format("{} calls per rank, {} of the function's {} calls, {} each on average",
                                    format_value(double(calls) / ranks, Unit::Count),
                                    format_value(double(calls) / double(function.calls), Unit::Share),
                                    function.calls, human_duration(double(time_ns) / double(calls))),
                        fmt::format("most of them in {}: {} calls", busiest->label, busiest->calls)};
    if (waiting > 0)
      finding.evidence.push_back(
          fmt::format("{} in all, of which about {} waiting (in the wait-state findings)",
                      human_duration(double(time_ns)), human_duration(waiting)));
    finding.query = fmt::format(
        "SELECT rank, size_bin, SUM(count) AS calls, SUM(time_total_ns) AS time_ns FROM call_stats "
        "WHERE function_id = {} AND size_bin < {} GROUP BY rank, size_bin ORDER BY rank, size_bin",
        function.function_id, kSmallBelowBin);
    finding.view = fmt::format("Histograms: {}", function.name);
    finding.timeline = TimelinePlace{0, 0, {}, function.name};
    finding.advice =
        "Send fewer, larger messages: pack what goes to one partner in a step into one message "
        "(a derived datatype, MPI_Pack), fuse small reductions into one call (fusion buckets), or "
        "use a neighbourhood collective; every call pays its latency however little it moves.";
    section.findings.push_back(std::move(finding));
  }
}

} // namespace commlens::analysis::detail
