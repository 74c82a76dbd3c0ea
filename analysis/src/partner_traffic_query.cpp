// The viewer's partner matrix by kind of traffic (breakdowns.hpp): MPI and NCCL point-to-point and
// NCCL collectives, each peer a run rank.
#include "commlens/analysis/breakdowns.hpp"

#include "commlens/analysis/statement.hpp"

namespace commlens::analysis {
namespace {

// Peers below 0 (none, MPI_PROC_NULL, unresolved MPI_ANY_SOURCE) go nowhere; receives would count
// each message twice. NCCL calls keep -1 as their peer in call_stats unless it is the process
// itself, so they are left out here by their family.
constexpr std::string_view kMpiSql = R"sql(
SELECT s.rank, s.peer, SUM(s.count), SUM(s.bytes_sent) FROM call_stats s
JOIN functions f ON f.id = s.function_id AND f.family NOT LIKE 'nccl%'
WHERE s.peer >= 0 AND s.bytes_sent > 0
GROUP BY 1, 2 ORDER BY 1, 2
)sql";

// The member holding the NCCL rank (its communicators row in the merged file) gives the run rank.
constexpr std::string_view kNcclPointToPointSql = R"sql(
SELECT s.rank, c.rank, SUM(s.count), SUM(s.bytes_sent) FROM nccl_call_stats s
JOIN communicators c ON c.id = s.comm_id AND c.local_rank = s.peer
WHERE s.peer >= 0 AND s.bytes_sent > 0 AND c.rank <> s.rank
GROUP BY 1, 2 ORDER BY 1, 2
)sql";

// `own.size - 1` other members share each call's contribution; members whose rows are missing
// (a rank that never merged) get nothing, the others no more than their share.
constexpr std::string_view kNcclCollectiveSql = R"sql(
SELECT s.rank, member.rank, SUM(s.count), SUM(s.bytes_sent * 1.0 / (own.size - 1)) FROM call_stats s
JOIN functions f ON f.id = s.function_id AND f.family = 'nccl_collective'
JOIN communicators own ON own.id = s.comm_id AND own.rank = s.rank
JOIN communicators member ON member.id = s.comm_id AND member.rank <> s.rank
WHERE own.size > 1 AND s.bytes_sent > 0
GROUP BY 1, 2 ORDER BY 1, 2
)sql";

void read_cells(const Database& database, std::string_view sql, TrafficKind kind,
                std::vector<PartnerCell>& cells) {
  auto query = database.prepare(sql);
  while (query.step())
    cells.push_back({kind, static_cast<int>(query.integer(0)), static_cast<int>(query.integer(1)),
                     static_cast<std::uint64_t>(query.integer(2)), query.real(3)});
}

} // namespace

std::vector<PartnerCell> query_partner_traffic(const Database& database) {
  std::vector<PartnerCell> cells;
  read_cells(database, kMpiSql, TrafficKind::MpiPointToPoint, cells);
  if (database.has_table("nccl_call_stats"))
    read_cells(database, kNcclPointToPointSql, TrafficKind::NcclPointToPoint, cells);
  read_cells(database, kNcclCollectiveSql, TrafficKind::NcclCollective, cells);
  return cells;
}

} // namespace commlens::analysis
