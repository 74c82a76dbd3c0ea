// The NCCL section: per NCCL function, datatype and reduction op, the host time of the calls
// (enqueue: NCCL returns once the work is on the stream) against the device time of the kernels and
// copies the calls launched (cuda_kernels / cuda_copies .mpi_call_id, linked by the CUDA
// collector's external correlation): a single-rank out-of-place ncclAllReduce is a copy, no kernel.
// Device work needs trace mode (it names its call by id) and the CUDA collectors' kernel records.
// Beside it, the calls' GPU time from the CUDA events around them (device_spans in trace mode,
// device_span_stats in summary mode), which the CUDA collector records by default.
#include "gpu/copy_timing.hpp"
#include "report_queries.hpp"

#include <fmt/format.h>

#include <map>

namespace commlens::analysis::detail {
namespace {

// Trace mode: every call with its kernels and copies ({} is their union; empty without CUDA data).
constexpr std::string_view kTraceSql = R"sql(
WITH calls AS (
  SELECT m.id, m.function_id, n.datatype, n.op, m.end_ns - m.start_ns AS enqueue_ns,
         MAX(m.bytes_sent, m.bytes_recv) AS bytes
  FROM mpi_calls m JOIN nccl_calls n ON n.call_id = m.id
  WHERE (?1 IS NULL OR m.rank = ?1) AND (?2 IS NULL OR m.phase = ?2)),
device AS (
  SELECT mpi_call_id, COUNT(*) AS operations, SUM(end_ns - start_ns) AS device_ns FROM ({})
  WHERE mpi_call_id IN (SELECT id FROM calls) GROUP BY mpi_call_id),
spans AS (SELECT call_id, end_ns - start_ns AS span_ns FROM ({}) WHERE call_id IN (SELECT id FROM calls))
SELECT f.name, COALESCE(d.name, '-'), COALESCE(o.name, '-'), COUNT(*), SUM(c.bytes), SUM(c.enqueue_ns),
       COALESCE(SUM(k.operations), 0), COALESCE(SUM(k.device_ns), 0), COUNT(k.mpi_call_id),
       COALESCE(SUM(g.span_ns), 0), COUNT(g.call_id)
FROM calls c JOIN functions f ON f.id = c.function_id LEFT JOIN device k ON k.mpi_call_id = c.id
     LEFT JOIN spans g ON g.call_id = c.id
     LEFT JOIN nccl_datatypes d ON d.id = c.datatype LEFT JOIN nccl_ops o ON o.id = c.op
GROUP BY 1, 2, 3 ORDER BY SUM(c.enqueue_ns) + COALESCE(SUM(k.device_ns), 0) DESC, 1, 2, 3)sql";

// Summary mode: the host side only.
constexpr std::string_view kSummarySql = R"sql(
SELECT f.name, COALESCE(d.name, '-'), COALESCE(o.name, '-'), SUM(s.count), SUM(MAX(s.bytes_sent, s.bytes_recv)),
       SUM(s.time_total_ns)
FROM nccl_call_stats s JOIN functions f ON f.id = s.function_id
     LEFT JOIN nccl_datatypes d ON d.id = s.datatype LEFT JOIN nccl_ops o ON o.id = s.op
WHERE (?1 IS NULL OR s.rank = ?1) AND (?2 IS NULL OR s.phase = ?2)
GROUP BY 1, 2, 3 ORDER BY SUM(s.time_total_ns) DESC, 1, 2, 3)sql";

// The kernels and copies tied to calls, as one row source; an empty stand-in keeps one query for
// databases without CUDA data.
std::string device_work(const Database& database) {
  std::string parts;
  for (const char* table : {"cuda_kernels", "cuda_copies"}) {
    if (database.has_table(table)) {
      // Only copies timed on the GPU are device time (copy_timing.hpp).
      parts += fmt::format("{}SELECT mpi_call_id, start_ns, end_ns FROM {} WHERE {}",
                           parts.empty() ? "" : " UNION ALL ", table, ran_on_gpu_clock(database, table));
    }
  }
  return parts.empty() ? "SELECT NULL AS mpi_call_id, 0 AS start_ns, 0 AS end_ns WHERE 0" : parts;
}

// The calls' GPU spans; an empty stand-in for databases written before they were recorded.
std::string device_spans(const Database& database) {
  return database.has_table("device_spans") ? "SELECT call_id, start_ns, end_ns FROM device_spans"
                                            : "SELECT NULL AS call_id, 0 AS start_ns, 0 AS end_ns WHERE 0";
}

// Summary mode: each NCCL function's GPU time, summed over its calls.
std::map<std::string, std::int64_t> span_totals(const Database& database, const ReportFilter& filter) {
  std::map<std::string, std::int64_t> totals;
  if (!database.has_rows("device_span_stats"))
    return totals;
  auto query = database.prepare(R"sql(
SELECT f.name, SUM(s.time_total_ns) FROM device_span_stats s JOIN functions f ON f.id = s.function_id
WHERE (?1 IS NULL OR s.rank = ?1) AND (?2 IS NULL OR s.phase = ?2) GROUP BY 1)sql");
  bind_filter(query, filter);
  while (query.step())
    totals[query.text(0)] = query.integer(1);
  return totals;
}

Cell mean(std::int64_t total_ns, std::int64_t count) {
  return count > 0 ? Cell(double(total_ns) / double(count)) : Cell();
}

// Summary mode keeps no call ids, so the device work cannot be tied to calls there: host columns and
// the GPU time of the events.
std::vector<TableColumn> columns(bool traced) {
  std::vector<TableColumn> columns{{"function", "function", Unit::Text},
                                   {"datatype", "datatype", Unit::Text},
                                   {"op", "op", Unit::Text},
                                   {"calls", "calls", Unit::Count},
                                   {"bytes", "bytes", Unit::Bytes},
                                   {"enqueue time", "enqueue_time_ns", Unit::Nanoseconds},
                                   {"mean enqueue", "mean_enqueue_ns", Unit::Nanoseconds}};
  if (traced)
    columns.insert(columns.end(), {{"kernels + copies", "device_operations", Unit::Count},
                                   {"device time", "device_time_ns", Unit::Nanoseconds},
                                   {"mean device time", "mean_device_time_ns", Unit::Nanoseconds}});
  columns.push_back({"GPU time (events)", "gpu_time_ns", Unit::Nanoseconds});
  return columns;
}

} // namespace

OptionalSection query_nccl_section(const Database& database, const ReportFilter& filter) {
  const bool traced = database.has_rows("nccl_calls");
  if (!traced && !database.has_rows("nccl_call_stats"))
    return absent_section("no NCCL calls", "a program that calls NCCL, run under commlens");
  auto section = section_with(columns(traced));
  if (!traced) {
    auto query = database.prepare(kSummarySql);
    bind_filter(query, filter);
    const auto spans = span_totals(database, filter);
    std::map<std::string, int> rows_of;
    while (query.step()) {
      ++rows_of[query.text(0)];
      section.rows.push_back({query.text(0), query.text(1), query.text(2), query.integer(3), query.integer(4),
                              query.integer(5), mean(query.integer(5), query.integer(3)), Cell()});
    }
    // The statistics keep no datatype or op: a function's GPU time fills its row when it has one.
    for (auto& row : section.rows) {
      const auto& function = std::get<std::string>(row[0]);
      if (const auto total = spans.find(function); total != spans.end() && rows_of[function] == 1)
        row.back() = Cell(total->second);
    }
    return section;
  }
  auto query = database.prepare(fmt::format(kTraceSql, device_work(database), device_spans(database)));
  bind_filter(query, filter);
  while (query.step()) {
    const auto calls = query.integer(3);
    const auto calls_with_kernels = query.integer(8);
    // The mean device time is over the calls that launched device work (a group's kernels come
    // from its ncclGroupEnd, not from the ncclSend / ncclRecv inside it).
    section.rows.push_back({query.text(0), query.text(1), query.text(2), calls, query.integer(4),
                            query.integer(5), mean(query.integer(5), calls), query.integer(6),
                            query.integer(7), mean(query.integer(7), calls_with_kernels),
                            query.integer(10) > 0 ? Cell(query.integer(9)) : Cell()});
  }
  return section;
}

} // namespace commlens::analysis::detail
