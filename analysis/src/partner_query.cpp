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

} // namespace

std::vector<PartnerTraffic> query_partners(const Database& database, const ReportFilter& filter) {
  auto query = database.prepare(kPartnerSql);
  bind_filter(query, filter);
  std::vector<PartnerTraffic> partners;
  while (query.step())
    partners.push_back({static_cast<int>(query.integer(0)), static_cast<int>(query.integer(1)),
                        static_cast<std::uint64_t>(query.integer(2)),
                        static_cast<std::uint64_t>(query.integer(3))});
  return partners;
}

} // namespace commlens::analysis::detail
