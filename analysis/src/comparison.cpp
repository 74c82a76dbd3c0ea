#include "commlens/analysis/comparison.hpp"

#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/quantile_sketch.hpp"
#include "commlens/analysis/size_bin.hpp"
#include "report_queries.hpp"

#include <algorithm>
#include <bit>
#include <map>

namespace commlens::analysis {
namespace {

using BinKey = std::pair<std::string, int>; // function name, size bin

struct SideStats {
  std::uint64_t calls = 0;
  std::int64_t time_total_ns = 0;
  QuantileSketch times;
};
using Side = std::map<BinKey, SideStats>;

int size_bin_of(std::int64_t bytes_sent, std::int64_t bytes_recv) {
  const auto bytes = static_cast<std::uint64_t>(std::max<std::int64_t>({bytes_sent, bytes_recv, 0}));
  return bytes == 0 ? kZeroBytesBin : static_cast<int>(std::bit_width(bytes)) - 1;
}

// One streaming pass over mpi_calls; `implementation` NULL reads every call.
Side traced_side(const Database& database, std::optional<std::string> implementation) {
  const auto names = detail::query_function_names(database);
  auto query = database.prepare(R"sql(
SELECT function_id, bytes_sent, bytes_recv, end_ns - start_ns FROM mpi_calls
WHERE ?1 IS NULL OR implementation = (SELECT id FROM implementations WHERE name = ?1))sql");
  if (implementation)
    query.bind(1, *implementation);
  else
    query.bind(1, std::optional<std::int64_t>{});
  Side side;
  while (query.step()) {
    const auto name = names.find(static_cast<int>(query.integer(0)));
    auto& stats =
        side[{name != names.end() ? name->second : "?", size_bin_of(query.integer(1), query.integer(2))}];
    ++stats.calls;
    stats.time_total_ns += query.integer(3);
    stats.times.add(query.integer(3));
  }
  return side;
}

Side summary_side(const Database& database) {
  auto query = database.prepare(R"sql(
SELECT f.name, c.size_bin, SUM(c.count), SUM(c.time_total_ns) FROM call_stats c JOIN functions f ON f.id = c.function_id
GROUP BY f.name, c.size_bin)sql");
  Side side;
  while (query.step()) {
    auto& stats = side[{query.text(0), static_cast<int>(query.integer(1))}];
    stats.calls = static_cast<std::uint64_t>(query.integer(2));
    stats.time_total_ns = query.integer(3);
  }
  return side;
}

ComparedSide compared(const SideStats& stats, bool per_call_times) {
  ComparedSide side{stats.calls, stats.time_total_ns};
  if (per_call_times) {
    side.median_ns = stats.times.quantile(0.5);
    side.p95_ns = stats.times.quantile(0.95);
  } else if (stats.calls > 0) {
    side.median_ns = stats.time_total_ns / static_cast<std::int64_t>(stats.calls);
  }
  return side;
}

std::optional<double> ratio(std::int64_t a, std::int64_t b) {
  return a > 0 ? std::optional<double>(double(b) / double(a)) : std::nullopt;
}

Comparison join_sides(Comparison comparison, const Side& a, const Side& b) {
  static const SideStats kNoCalls;
  std::map<BinKey, std::pair<const SideStats*, const SideStats*>> joined;
  for (const auto& [key, stats] : a)
    joined[key] = {&stats, &kNoCalls};
  for (const auto& [key, stats] : b) {
    auto& pair = joined.try_emplace(key, &kNoCalls, &kNoCalls).first->second;
    pair.second = &stats;
  }
  for (const auto& [key, pair] : joined) {
    ComparedBin bin{key.first, key.second, size_bin_key(key.second),
                    compared(*pair.first, comparison.per_call_times),
                    compared(*pair.second, comparison.per_call_times)};
    if (bin.a.calls > 0 && bin.b.calls > 0) {
      bin.median_ratio = ratio(bin.a.median_ns, bin.b.median_ns);
      if (bin.a.p95_ns && bin.b.p95_ns)
        bin.p95_ratio = ratio(*bin.a.p95_ns, *bin.b.p95_ns);
    }
    comparison.bins.push_back(std::move(bin));
  }
  return comparison;
}

} // namespace

Comparison compare_databases(const Database& a, const Database& b) {
  Comparison comparison{a.path().string(), b.path().string()};
  compare_training_steps(a, b, comparison);
  comparison.per_call_times = a.has_rows("mpi_calls") && b.has_rows("mpi_calls");
  if (!comparison.per_call_times) {
    comparison.note =
        "not both trace databases: per-call times unavailable, the median columns show the mean "
        "time per call (call_stats) and p95 is not shown";
    return join_sides(std::move(comparison), summary_side(a), summary_side(b));
  }
  return join_sides(std::move(comparison), traced_side(a, std::nullopt), traced_side(b, std::nullopt));
}

Comparison compare_implementations(const Database& database, const std::string& a, const std::string& b) {
  const auto traced = traced_implementations(database);
  for (const auto& name : {a, b})
    if (std::find(traced.begin(), traced.end(), name) == traced.end())
      throw AnalysisError(database.path().string() + ": no traced calls ran by implementation '" + name +
                          "' (needs a trace-mode run with COMMLENS_RUNTIME=ab)");
  Comparison comparison{.label_a = a, .label_b = b, .per_call_times = true};
  return join_sides(std::move(comparison), traced_side(database, a), traced_side(database, b));
}

std::vector<std::string> traced_implementations(const Database& database) {
  auto query = database.prepare(R"sql(
SELECT i.name FROM implementations i WHERE EXISTS (SELECT 1 FROM mpi_calls c WHERE c.implementation = i.id)
ORDER BY i.id)sql");
  std::vector<std::string> names;
  while (query.step())
    names.push_back(query.text(0));
  return names;
}

std::optional<std::pair<std::string, std::string>> default_implementation_pair(const Database& database) {
  if (!database.has_table("mpi_calls") || !database.has_table("implementations"))
    return std::nullopt;
  // Calls per implementation, function and size bin (bytes grouped in SQL, binned here).
  std::map<std::string, std::map<BinKey, std::uint64_t>> calls;
  auto query = database.prepare(R"sql(
SELECT i.name, c.function_id, c.bytes_sent, c.bytes_recv, COUNT(*) FROM mpi_calls c
JOIN implementations i ON i.id = c.implementation GROUP BY 1, 2, 3, 4)sql");
  while (query.step())
    calls[query.text(0)]
         [{std::to_string(query.integer(1)), size_bin_of(query.integer(2), query.integer(3))}] +=
        static_cast<std::uint64_t>(query.integer(4));
  std::vector<std::string> baselines, runtimes;
  for (const auto& [name, bins] : calls)
    (name.starts_with("runtime:") ? runtimes : baselines).push_back(name);
  // `mpi:*` baselines before plain `mpi`, which wins only where it shares more.
  std::stable_partition(baselines.begin(), baselines.end(),
                        [](const std::string& name) { return name.starts_with("mpi:"); });
  if (runtimes.empty() || baselines.empty())
    return std::nullopt;
  std::pair<std::string, std::string> best{baselines.front(), runtimes.front()};
  std::uint64_t best_shared = 0;
  for (const auto& baseline : baselines)
    for (const auto& runtime : runtimes) {
      std::uint64_t shared = 0;
      for (const auto& [key, count] : calls[baseline])
        if (const auto found = calls[runtime].find(key); found != calls[runtime].end())
          shared += std::min(count, found->second);
      if (shared > best_shared) {
        best_shared = shared;
        best = {baseline, runtime};
      }
    }
  return best;
}

} // namespace commlens::analysis
