// Who sends to whom (point-to-point, MPI and NCCL) and how much each rank sends in collectives.
#include "report_queries.hpp"

namespace commlens::analysis::detail {
namespace {

// The sending side of every message with data and a resolved peer: receives would count each
// message twice, and peers below 0 (none, MPI_PROC_NULL, unresolved MPI_ANY_SOURCE) go nowhere.
constexpr std::string_view kPartnerSql = R"sql(
SELECT rank, peer, SUM(count), SUM(bytes_sent), 0, 0 FROM call_stats
WHERE (?1 IS NULL OR rank = ?1) AND (?2 IS NULL OR phase = ?2) AND peer >= 0 AND bytes_sent > 0
GROUP BY rank, peer ORDER BY rank, peer
)sql";

// ncclSend peers are ranks of the NCCL communicator, stored in call_stats as -1 unless the peer
// is the process itself: the member that holds that NCCL rank (its communicators row, in the
// merged file) gives the run rank. Peers whose member row is missing stay out. NCCL's calls are in
// call_stats too (with peer -1), so the first part counts MPI's alone.
constexpr std::string_view kPartnerWithNcclSql = R"sql(
SELECT rank, peer, SUM(messages), SUM(bytes), SUM(nccl_messages), SUM(nccl_bytes) FROM (
  SELECT rank, peer, count AS messages, bytes_sent AS bytes, 0 AS nccl_messages, 0 AS nccl_bytes
  FROM call_stats
  WHERE (?1 IS NULL OR rank = ?1) AND (?2 IS NULL OR phase = ?2) AND peer >= 0 AND bytes_sent > 0
        AND function_id NOT IN (SELECT id FROM functions WHERE name LIKE 'nccl:%')
  UNION ALL
  SELECT s.rank, c.rank, s.count, s.bytes_sent, s.count, s.bytes_sent FROM nccl_call_stats s
  JOIN communicators c ON c.id = s.comm_id AND c.local_rank = s.peer
  WHERE (?1 IS NULL OR s.rank = ?1) AND (?2 IS NULL OR s.phase = ?2) AND s.peer >= 0 AND s.bytes_sent > 0
        AND c.rank <> s.rank)
GROUP BY rank, peer ORDER BY rank, peer
)sql";

// Collectives by library: NCCL's functions are named nccl:*, in families nccl_collective and so on.
constexpr std::string_view kCollectiveSql = R"sql(
SELECT c.rank,
       SUM(CASE WHEN f.family = 'collective' THEN c.count ELSE 0 END),
       SUM(CASE WHEN f.family = 'collective' THEN c.bytes_sent ELSE 0 END),
       SUM(CASE WHEN f.family = 'nccl_collective' THEN c.count ELSE 0 END),
       SUM(CASE WHEN f.family = 'nccl_collective' THEN c.bytes_sent ELSE 0 END)
FROM call_stats c JOIN functions f ON f.id = c.function_id
WHERE (?1 IS NULL OR c.rank = ?1) AND (?2 IS NULL OR c.phase = ?2)
      AND f.family IN ('collective', 'nccl_collective')
GROUP BY c.rank ORDER BY c.rank
)sql";

std::uint64_t unsigned_column(const Statement& row, int column) {
  return static_cast<std::uint64_t>(row.integer(column));
}

} // namespace

std::vector<PartnerTraffic> query_partners(const Database& database, const ReportFilter& filter) {
  auto query = database.prepare(database.has_table("nccl_call_stats") ? kPartnerWithNcclSql : kPartnerSql);
  bind_filter(query, filter);
  std::vector<PartnerTraffic> partners;
  while (query.step())
    partners.push_back({static_cast<int>(query.integer(0)), static_cast<int>(query.integer(1)),
                        unsigned_column(query, 2), unsigned_column(query, 3), unsigned_column(query, 4),
                        unsigned_column(query, 5)});
  return partners;
}

std::vector<CollectiveTraffic> query_collective_traffic(const Database& database,
                                                        const ReportFilter& filter) {
  auto query = database.prepare(kCollectiveSql);
  bind_filter(query, filter);
  std::vector<CollectiveTraffic> ranks;
  while (query.step())
    ranks.push_back({static_cast<int>(query.integer(0)), unsigned_column(query, 1), unsigned_column(query, 2),
                     unsigned_column(query, 3), unsigned_column(query, 4)});
  return ranks;
}

} // namespace commlens::analysis::detail
