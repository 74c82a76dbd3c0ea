// Time per rank and function and per phase and function, and CUDA copies per path, rank and GPU and per path
// over time.
#include "commlens/analysis/breakdowns.hpp"

#include "commlens/analysis/statement.hpp"
#include "gpu/copy_timing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace commlens::analysis {

std::optional<double> CopyPathUsage::gb_per_s() const {
  if (busy_ns <= 0)
    return std::nullopt;
  return static_cast<double>(timed_bytes) / static_cast<double>(busy_ns); // bytes per ns = GB/s
}

std::vector<GroupFunctionTime> query_function_times(const Database& database, FunctionTimeGroup group) {
  // The column name comes from this enum, never from input.
  const std::string column = group == FunctionTimeGroup::Rank ? "rank" : "phase";
  auto query =
      database.prepare("SELECT s." + column +
                       ", coalesce(f.name, 'function ' || s.function_id), SUM(s.count), SUM(s.time_total_ns) "
                       "FROM call_stats s LEFT JOIN functions f ON f.id = s.function_id GROUP BY s." +
                       column + ", s.function_id ORDER BY s." + column + ", SUM(s.time_total_ns) DESC");
  std::vector<GroupFunctionTime> times;
  while (query.step())
    times.push_back({static_cast<int>(query.integer(0)), query.text(1),
                     static_cast<std::uint64_t>(query.integer(2)), query.integer(3)});
  return times;
}

namespace {

// cuda_copies' route columns, in CopyRoute's order: path, link, direction, host memory.
constexpr std::string_view kRouteColumns =
    "path, link, copy_kind, CASE WHEN copy_kind LIKE 'Hto%' THEN src_kind WHEN copy_kind LIKE '%toH' THEN "
    "dst_kind ELSE '' END";

CopyRoute route_at(const Statement& row, int first_column) {
  return {row.text(first_column), row.optional_text(first_column + 1), row.text(first_column + 2),
          row.text(first_column + 3)};
}

} // namespace

std::vector<CopyPathUsage> query_copy_path_usage(const Database& database) {
  std::vector<CopyPathUsage> usage;
  if (!database.has_table("cuda_copies"))
    return usage;
  auto query = database.prepare(
      fmt::format("SELECT {}, rank, device, SUM({}), SUM(bytes), COALESCE(SUM({}), 0), COALESCE(SUM({}), 0) "
                  "FROM cuda_copies GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6",
                  kRouteColumns, detail::copy_count(database), detail::copy_gpu_ns(database),
                  detail::copy_timed_bytes(database)));
  while (query.step())
    usage.push_back({route_at(query, 0), static_cast<int>(query.integer(4)),
                     static_cast<int>(query.integer(5)), static_cast<std::uint64_t>(query.integer(6)),
                     static_cast<std::uint64_t>(query.integer(7)), query.integer(8),
                     static_cast<std::uint64_t>(query.integer(9))});
  return usage;
}

std::optional<std::pair<std::int64_t, std::int64_t>>
query_copy_span(const Database& database, const CopyRoute& route, int rank, int device) {
  if (!database.has_table("cuda_copies"))
    return std::nullopt;
  auto query = database.prepare(
      fmt::format("SELECT MIN(start_ns), MAX(end_ns) FROM (SELECT start_ns, end_ns, {} AS host_memory "
                  "FROM cuda_copies WHERE rank = ?3 AND device = ?4 AND path = ?1 AND link IS ?2 AND "
                  "copy_kind = ?5) WHERE host_memory = ?6",
                  kRouteColumns.substr(kRouteColumns.find("CASE"))));
  query.bind(1, route.path);
  if (route.link)
    query.bind(2, *route.link);
  else
    query.bind(2, std::nullopt);
  query.bind(3, rank).bind(4, device).bind(5, route.direction).bind(6, route.host_memory);
  if (!query.step() || !query.optional_integer(0))
    return std::nullopt;
  return std::pair{query.integer(0), query.integer(1)};
}

std::vector<CopyPathSeries> query_copy_path_series(const Database& database, std::int64_t start_ns,
                                                   std::int64_t end_ns, int bins) {
  std::vector<CopyPathSeries> series;
  if (!database.has_table("cuda_copies") || bins <= 0 || end_ns <= start_ns)
    return series;
  const std::int64_t width = std::max<std::int64_t>(1, (end_ns - start_ns + bins - 1) / bins);
  auto query = database.prepare(fmt::format("SELECT {}, (start_ns - ?1) / ?3, SUM(bytes) FROM cuda_copies "
                                            "WHERE start_ns >= ?1 AND start_ns < ?2 GROUP BY 1, 2, 3, 4, 5 "
                                            "ORDER BY 1, 2, 3, 4, 5",
                                            kRouteColumns));
  query.bind(1, start_ns).bind(2, end_ns).bind(3, width);
  while (query.step()) {
    auto route = route_at(query, 0);
    if (series.empty() || series.back().route != route)
      series.push_back({std::move(route), std::vector<std::uint64_t>(static_cast<std::size_t>(bins), 0)});
    const auto bin = std::clamp<std::int64_t>(query.integer(4), 0, bins - 1);
    series.back().bytes_per_bin[static_cast<std::size_t>(bin)] +=
        static_cast<std::uint64_t>(query.integer(5));
  }
  return series;
}

} // namespace commlens::analysis
