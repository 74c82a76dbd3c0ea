#include "report_queries.hpp"

namespace commlens::analysis::detail {
namespace {

// The sending side of every message with data and a resolved peer: receives would count each
// message twice, and peers below 0 (none, MPI_PROC_NULL, unresolved MPI_ANY_SOURCE) go nowhere.
constexpr std::string_view kPartnerSql = R"sql(
SELECT rank, peer, SUM(count), SUM(bytes_sent) FROM call_stats
WHERE (?1 IS NULL OR rank = ?1) AND (?2 IS NULL OR phase = ?2) AND peer >= 0 AND bytes_sent > 0
GROUP BY rank, peer ORDER BY rank, peer
)sql";

// ncclSend peers are ranks of the NCCL communicator, stored in call_stats as -1 unless the peer
// is the process itself: the member that holds that NCCL rank (its communicators row, in the
// merged file) gives the run rank. Peers whose member row is missing stay out.
constexpr std::string_view kPartnerWithNcclSql = R"sql(
SELECT rank, peer, SUM(messages), SUM(bytes) FROM (
  SELECT rank, peer, count AS messages, bytes_sent AS bytes FROM call_stats
  WHERE (?1 IS NULL OR rank = ?1) AND (?2 IS NULL OR phase = ?2) AND peer >= 0 AND bytes_sent > 0
  UNION ALL
  SELECT s.rank, c.rank, s.count, s.bytes_sent FROM nccl_call_stats s
  JOIN communicators c ON c.id = s.comm_id AND c.local_rank = s.peer
  WHERE (?1 IS NULL OR s.rank = ?1) AND (?2 IS NULL OR s.phase = ?2) AND s.peer >= 0 AND s.bytes_sent > 0
        AND c.rank <> s.rank)
GROUP BY rank, peer ORDER BY rank, peer
)sql";

} // namespace

std::vector<PartnerTraffic> query_partners(const Database& database, const ReportFilter& filter) {
  auto query = database.prepare(database.has_table("nccl_call_stats") ? kPartnerWithNcclSql : kPartnerSql);
  bind_filter(query, filter);
  std::vector<PartnerTraffic> partners;
  while (query.step())
    partners.push_back({static_cast<int>(query.integer(0)), static_cast<int>(query.integer(1)),
                        static_cast<std::uint64_t>(query.integer(2)),
                        static_cast<std::uint64_t>(query.integer(3))});
  return partners;
}

} // namespace commlens::analysis::detail
