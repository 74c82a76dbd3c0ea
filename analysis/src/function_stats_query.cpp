#include "commlens/analysis/size_bin.hpp"
#include "report_queries.hpp"

#include <unordered_map>

namespace commlens::analysis::detail {
namespace {

constexpr std::string_view kFunctionTotalsSql = R"sql(
SELECT f.id, f.name, f.family, SUM(c.count), SUM(c.bytes_sent), SUM(c.bytes_recv),
       SUM(c.time_total_ns), MIN(c.time_min_ns), MAX(c.time_max_ns)
FROM call_stats c JOIN functions f ON f.id = c.function_id
WHERE (?1 IS NULL OR c.rank = ?1) AND (?2 IS NULL OR c.phase = ?2)
GROUP BY f.id
ORDER BY SUM(c.time_total_ns) DESC, f.name
)sql";

constexpr std::string_view kSizeHistogramSql = R"sql(
SELECT c.function_id, c.size_bin, SUM(c.count), SUM(c.bytes_sent), SUM(c.bytes_recv), SUM(c.time_total_ns)
FROM call_stats c
WHERE (?1 IS NULL OR c.rank = ?1) AND (?2 IS NULL OR c.phase = ?2)
GROUP BY c.function_id, c.size_bin
ORDER BY c.function_id, c.size_bin
)sql";

std::vector<FunctionStats> query_function_totals(const Database& database, const ReportFilter& filter) {
  auto query = database.prepare(kFunctionTotalsSql);
  bind_filter(query, filter);
  std::vector<FunctionStats> functions;
  while (query.step()) {
    FunctionStats function;
    function.function_id = static_cast<int>(query.integer(0));
    function.name = query.text(1);
    function.family = query.text(2);
    function.calls = static_cast<std::uint64_t>(query.integer(3));
    function.bytes_sent = static_cast<std::uint64_t>(query.integer(4));
    function.bytes_recv = static_cast<std::uint64_t>(query.integer(5));
    function.time_total_ns = query.integer(6);
    function.time_min_ns = query.integer(7);
    function.time_max_ns = query.integer(8);
    functions.push_back(std::move(function));
  }
  return functions;
}

void attach_size_histograms(const Database& database, const ReportFilter& filter,
                            std::vector<FunctionStats>& functions) {
  std::unordered_map<int, FunctionStats*> by_id;
  for (auto& function : functions)
    by_id.emplace(function.function_id, &function);

  auto query = database.prepare(kSizeHistogramSql);
  bind_filter(query, filter);
  while (query.step()) {
    const auto found = by_id.find(static_cast<int>(query.integer(0)));
    if (found == by_id.end()) // a call_stats row whose function is not in the functions table
      continue;
    SizeBinStats bin;
    bin.size_bin = static_cast<int>(query.integer(1));
    bin.key = size_bin_key(bin.size_bin);
    bin.label = size_bin_label(bin.size_bin);
    bin.calls = static_cast<std::uint64_t>(query.integer(2));
    bin.bytes_sent = static_cast<std::uint64_t>(query.integer(3));
    bin.bytes_recv = static_cast<std::uint64_t>(query.integer(4));
    bin.time_total_ns = query.integer(5);
    found->second->size_histogram.push_back(std::move(bin));
  }
}

} // namespace

std::vector<FunctionStats> query_function_stats(const Database& database, const ReportFilter& filter) {
  auto functions = query_function_totals(database, filter);
  attach_size_histograms(database, filter, functions);
  std::int64_t mpi_total_ns = 0;
  for (const auto& function : functions)
    mpi_total_ns += function.time_total_ns;
  for (auto& function : functions)
    function.share_of_mpi_time =
        mpi_total_ns > 0 ? static_cast<double>(function.time_total_ns) / static_cast<double>(mpi_total_ns)
                         : 0.0;
  return functions;
}

} // namespace commlens::analysis::detail
