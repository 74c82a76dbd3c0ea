// Unexpected-queue build-up (MPI_T): messages that arrived before their receive was posted wait in
// the MPI library's unexpected queue, are copied once more and searched by every receive posted.
// The library's queue-length pvar (Open MPI's pml_ob1_unexpected_msgq_length, MPICH's
// unexpected_recvq_length), summed over its per-peer elements, read at call boundaries.
#include "commlens/analysis/report_format.hpp"
#include "findings_engine.hpp"

#include <fmt/format.h>

namespace commlens::analysis::detail {
namespace {

constexpr std::string_view kQueueSamplesSql = R"sql(
SELECT p.name, s.rank, s.comm_id, s.time_ns, SUM(s.value), MAX(s.call_id)
FROM pvar_samples s JOIN pvars p ON p.id = s.pvar_id
WHERE p.name LIKE '%unexpected%' AND p.class IN ('level', 'size', 'state', 'highwatermark')
  AND (?1 IS NULL OR s.rank = ?1)
GROUP BY s.pvar_id, s.rank, s.comm_id, s.time_ns ORDER BY s.pvar_id, s.rank, s.comm_id, s.time_ns
)sql";

struct Peak {
  std::string pvar;
  int rank = 0;
  std::optional<std::int64_t> comm_id; // NULL for a pvar bound to no communicator
  std::int64_t time_ns = 0;
  double length = 0;
  std::optional<std::int64_t> call_id;
};

struct QueueGroup {
  std::int64_t above_ns = 0; // time the queues held at least the threshold, summed over ranks
  Peak peak;
};

// ", in MPI_Barrier": the call at whose boundary the queue was read; empty when none is known.
std::string in_call(const FindingContext& context, std::optional<std::int64_t> call_id) {
  if (!call_id)
    return {};
  auto query = context.database.prepare("SELECT function_id FROM mpi_calls WHERE id = ?1");
  query.bind(1, *call_id);
  return query.step() ? ", in " + context.function_name(static_cast<int>(query.integer(0))) : std::string();
}

// The peer that left the most messages in the queue at its peak, for pvars with one element per
// peer (Open MPI's: the element is the peer's rank in the communicator); empty for a single value.
std::string busiest_peer(const FindingContext& context, const Peak& peak) {
  auto query = context.database.prepare(R"sql(
SELECT s.element, s.value, COUNT(*) OVER () FROM pvar_samples s JOIN pvars p ON p.id = s.pvar_id
WHERE p.name = ?1 AND s.rank = ?2 AND s.comm_id IS ?3 AND s.time_ns = ?4 ORDER BY s.value DESC LIMIT 1)sql");
  query.bind(1, peak.pvar).bind(2, peak.rank).bind(3, peak.comm_id).bind(4, peak.time_ns);
  if (!query.step() || query.integer(2) < 2 || query.real(1) <= 0)
    return {};
  return fmt::format(", {:.0f} of them from its rank {} in the communicator", query.real(1),
                     query.integer(0));
}

} // namespace

void find_unexpected_queues(const FindingContext& context, FindingsSection& section) {
  if (!context.database.has_rows("pvar_samples")) {
    section.not_analysed.push_back("unexpected-queue build-up: no MPI_T samples (the mpit collector, "
                                   "COMMLENS_COLLECTORS=all, with an MPI "
                                   "library that has queue-length performance variables)");
    return;
  }
  const double threshold = finding_rule("unexpected-queue").threshold;
  std::map<std::string, QueueGroup> groups; // by communicator name
  auto query = context.database.prepare(kQueueSamplesSql);
  query.bind(1, context.report.filter.rank ? std::optional<std::int64_t>(*context.report.filter.rank)
                                           : std::nullopt);
  std::optional<Peak> previous;
  while (query.step()) {
    const Peak sample{
        query.text(0), static_cast<int>(query.integer(1)), query.optional_integer(2), query.integer(3),
        query.real(4), query.optional_integer(5)};
    const bool same_series = previous && previous->pvar == sample.pvar && previous->rank == sample.rank &&
                             previous->comm_id == sample.comm_id;
    auto& group = groups[sample.comm_id ? context.communicators.label(sample.comm_id) : "all communicators"];
    // The queue held the previous sample's length until this one was read.
    if (same_series && previous->length >= threshold)
      group.above_ns += sample.time_ns - previous->time_ns;
    if (sample.length > group.peak.length)
      group.peak = sample;
    previous = sample;
  }
  for (const auto& [label, group] : groups) {
    if (!reaches_threshold("unexpected-queue", group.peak.length))
      continue;
    const auto& peak = group.peak;
    auto finding = make_finding(context, "unexpected-queue", label, group.above_ns, peak.length);
    finding.title = fmt::format("Unexpected messages pile up on {}: up to {:.0f} queued on rank {}", label,
                                peak.length, peak.rank);
    finding.evidence = {fmt::format("rank {} held {:.0f} unexpected messages ({}) at {}{}{}", peak.rank,
                                    peak.length, peak.pvar,
                                    human_duration(double(peak.time_ns - context.report.run_start_ns)),
                                    in_call(context, peak.call_id), busiest_peer(context, peak)),
                        fmt::format("queues held {:.0f} or more messages for {} in all", threshold,
                                    human_duration(double(group.above_ns)))};
    finding.query =
        fmt::format("SELECT s.rank, s.element AS peer, MAX(s.value) AS messages FROM pvar_samples s "
                    "JOIN pvars p ON p.id = s.pvar_id WHERE p.name = '{}' AND s.comm_id {} GROUP BY "
                    "s.rank, s.element ORDER BY messages DESC",
                    peak.pvar, peak.comm_id ? fmt::format("= {}", *peak.comm_id) : "IS NULL");
    finding.view = "the report's MPI_T table (commlens report)";
    finding.advice =
        "Messages arrive before their receives are posted: post MPI_Irecv before the matching sends "
        "can arrive, or hold the senders back; each unexpected message is copied once more and "
        "searched by every receive.";
    section.findings.push_back(std::move(finding));
  }
}

} // namespace commlens::analysis::detail
