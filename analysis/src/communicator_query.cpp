#include "report_queries.hpp"

#include <fmt/format.h>

namespace commlens::analysis::detail {
namespace {

// Every member registers a communicator; the row of its lowest world rank stands for it, and that
// rank is a member of the parent too, so the parent's name comes from the same process.
constexpr std::string_view kCommunicatorSql = R"sql(
WITH per_comm AS (
  SELECT comm_id, SUM(count) AS calls, SUM(bytes_sent + bytes_recv) AS bytes, SUM(time_total_ns) AS time
  FROM call_stats WHERE (?1 IS NULL OR rank = ?1) AND (?2 IS NULL OR phase = ?2) GROUP BY comm_id),
representative AS (SELECT id, MIN(rank) AS rank FROM communicators GROUP BY id)
SELECT p.comm_id, p.calls, p.bytes, p.time, m.size, m.name, f.name, parent.name, m.parent_id
FROM per_comm p
LEFT JOIN representative r ON r.id = p.comm_id
LEFT JOIN communicators m ON m.id = r.id AND m.rank = r.rank
LEFT JOIN functions f ON f.id = m.created_by
LEFT JOIN communicators parent ON parent.id = m.parent_id AND parent.rank = r.rank
ORDER BY p.time DESC, p.comm_id
)sql";

std::string communicator_label(const Statement& row) {
  if (row.integer(0) < 0)
    return "(no communicator: waits, tests, windows, files)";
  const auto name = row.text(5);
  if (!name.empty())
    return name;
  const auto creator = row.text(6);
  if (creator.empty())
    return fmt::format("communicator {:#x}", row.integer(0));
  const auto parent_name = row.text(7);
  const auto parent = !parent_name.empty()      ? parent_name
                      : row.optional_integer(8) ? fmt::format("{:#x}", *row.optional_integer(8))
                                                : std::string("?");
  return fmt::format("size {} from {} of {}", row.integer(4), creator, parent);
}

} // namespace

std::vector<CommunicatorStats> query_communicators(const Database& database, const ReportFilter& filter) {
  auto query = database.prepare(kCommunicatorSql);
  bind_filter(query, filter);
  std::vector<CommunicatorStats> communicators;
  while (query.step()) {
    CommunicatorStats communicator;
    communicator.id = query.integer(0);
    communicator.calls = static_cast<std::uint64_t>(query.integer(1));
    communicator.bytes = static_cast<std::uint64_t>(query.integer(2));
    communicator.time_total_ns = query.integer(3);
    communicator.size = static_cast<int>(query.optional_integer(4).value_or(0));
    communicator.label = communicator_label(query);
    communicators.push_back(std::move(communicator));
  }
  return communicators;
}

} // namespace commlens::analysis::detail
