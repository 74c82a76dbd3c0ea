// Time per rank and function and per phase and function, and CUDA copies per path, rank and GPU and per path
// over time.
#include "commlens/analysis/breakdowns.hpp"

#include <algorithm>
#include <map>

namespace commlens::analysis {

std::optional<double> CopyPathUsage::gb_per_s() const {
  if (busy_ns <= 0)
    return std::nullopt;
  return static_cast<double>(bytes) / static_cast<double>(busy_ns); // bytes per ns = GB/s
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

std::vector<CopyPathUsage> query_copy_path_usage(const Database& database) {
  std::vector<CopyPathUsage> usage;
  if (!database.has_table("cuda_copies"))
    return usage;
  auto query = database.prepare(R"sql(
SELECT path, link, rank, device, COUNT(*), SUM(bytes), SUM(end_ns - start_ns) FROM cuda_copies
GROUP BY path, link, rank, device ORDER BY path, link, rank, device
)sql");
  while (query.step())
    usage.push_back({query.text(0), query.optional_text(1), static_cast<int>(query.integer(2)),
                     static_cast<int>(query.integer(3)), static_cast<std::uint64_t>(query.integer(4)),
                     static_cast<std::uint64_t>(query.integer(5)), query.integer(6)});
  return usage;
}

std::optional<std::pair<std::int64_t, std::int64_t>> query_copy_span(const Database& database,
                                                                     const std::string& path,
                                                                     const std::optional<std::string>& link,
                                                                     int rank, int device) {
  if (!database.has_table("cuda_copies"))
    return std::nullopt;
  auto query =
      database.prepare("SELECT MIN(start_ns), MAX(end_ns) FROM cuda_copies WHERE path = ?1 AND link IS ?2 "
                       "AND rank = ?3 AND device = ?4");
  query.bind(1, path);
  if (link)
    query.bind(2, *link);
  else
    query.bind(2, std::nullopt);
  query.bind(3, rank).bind(4, device);
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
  auto query = database.prepare(R"sql(
SELECT path, (start_ns - ?1) / ?3, SUM(bytes) FROM cuda_copies WHERE start_ns >= ?1 AND start_ns < ?2
GROUP BY 1, 2 ORDER BY 1, 2
)sql");
  query.bind(1, start_ns).bind(2, end_ns).bind(3, width);
  while (query.step()) {
    auto path = query.text(0);
    if (series.empty() || series.back().path != path)
      series.push_back({std::move(path), std::vector<std::uint64_t>(static_cast<std::size_t>(bins), 0)});
    const auto bin = std::clamp<std::int64_t>(query.integer(1), 0, bins - 1);
    series.back().bytes_per_bin[static_cast<std::size_t>(bin)] +=
        static_cast<std::uint64_t>(query.integer(2));
  }
  return series;
}

} // namespace commlens::analysis
