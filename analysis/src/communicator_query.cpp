#include "names/communicator_names.hpp"
#include "report_queries.hpp"

namespace commlens::analysis::detail {
namespace {

constexpr std::string_view kCommunicatorSql = R"sql(
SELECT comm_id, SUM(count), SUM(bytes_sent + bytes_recv), SUM(time_total_ns)
FROM call_stats WHERE (?1 IS NULL OR rank = ?1) AND (?2 IS NULL OR phase = ?2)
GROUP BY comm_id ORDER BY SUM(time_total_ns) DESC, comm_id
)sql";

} // namespace

std::vector<CommunicatorStats> query_communicators(const Database& database, const ReportFilter& filter) {
  const CommunicatorNames names(database);
  auto query = database.prepare(kCommunicatorSql);
  bind_filter(query, filter);
  std::vector<CommunicatorStats> communicators;
  while (query.step()) {
    CommunicatorStats communicator;
    communicator.id = query.integer(0);
    communicator.calls = static_cast<std::uint64_t>(query.integer(1));
    communicator.bytes = static_cast<std::uint64_t>(query.integer(2));
    communicator.time_total_ns = query.integer(3);
    communicator.size = communicator.id >= 0 ? names.size(communicator.id) : 0;
    communicator.label = names.label(communicator.id);
    communicators.push_back(std::move(communicator));
  }
  return communicators;
}

} // namespace commlens::analysis::detail
