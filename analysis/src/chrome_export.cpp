#include "commlens/analysis/trace_export.hpp"

#include "chrome_trace_events.hpp"
#include "commlens/analysis/errors.hpp"
#include "report_queries.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <tuple>

namespace commlens::analysis {
namespace {

// Sends keyed (source = rank, destination = peer, tag, comm), receives keyed (source = peer,
// destination = rank, tag, comm); both in start order within a key, so a merge join pairs the
// n-th send with the n-th receive, which is MPI's non-overtaking rule.
// Persistent *_init calls only create requests (the message moves at MPI_Start), so they are left out.
constexpr std::string_view kSendsSql = R"sql(
SELECT rank, peer, tag, comm_id, thread, start_ns FROM mpi_calls
WHERE function_id IN (SELECT id FROM functions WHERE family = 'p2p' AND name LIKE '%send%' AND name NOT LIKE '%\_init' ESCAPE '\')
  AND peer >= 0 ORDER BY rank, peer, tag, comm_id, start_ns)sql";
constexpr std::string_view kReceivesSql = R"sql(
SELECT peer, rank, tag, comm_id, thread, start_ns FROM mpi_calls
WHERE function_id IN (SELECT id FROM functions WHERE family = 'p2p' AND name LIKE '%recv%' AND name NOT LIKE '%\_init' ESCAPE '\')
  AND peer >= 0 ORDER BY peer, rank, tag, comm_id, start_ns)sql";

// In id order: rank by rank, each thread's calls in start order (the storage order of mpi_calls,
// which has no index by time). NCCL calls add their nccl_calls row (files without the table: NULLs).
constexpr std::string_view kCallsSql = R"sql(
SELECT m.id, m.rank, m.thread, m.function_id, m.start_ns, m.end_ns, m.bytes_sent, m.bytes_recv, m.peer, m.tag,
       m.comm_id, n.call_id, d.name, o.name, n.stream, n.root, n.peer, n.group_depth
FROM mpi_calls m {} ORDER BY m.id)sql";
constexpr std::string_view kNcclJoin = "LEFT JOIN nccl_calls n ON n.call_id = m.id "
                                       "LEFT JOIN nccl_datatypes d ON d.id = n.datatype "
                                       "LEFT JOIN nccl_ops o ON o.id = n.op";
constexpr std::string_view kNoNccl =
    "LEFT JOIN (SELECT NULL AS call_id, NULL AS datatype, NULL AS op, NULL AS "
    "stream, NULL AS root, NULL AS peer, NULL AS group_depth WHERE 0) n "
    "LEFT JOIN (SELECT NULL AS name WHERE 0) d LEFT JOIN (SELECT NULL AS name "
    "WHERE 0) o";

// An NCCL call's own arguments (nccl_calls), after the common ones; empty for other calls.
std::string nccl_arguments(const Statement& call) {
  if (!call.optional_integer(11))
    return "";
  const auto number = [&call](int column) { return call.optional_integer(column).value_or(-1); };
  std::string text;
  // The names are NCCL's enum names (nccl_datatypes, nccl_ops): nothing to escape.
  if (call.optional_integer(12))
    text += fmt::format(",\"datatype\":\"{}\"", call.text(12));
  if (call.optional_integer(13))
    text += fmt::format(",\"op\":\"{}\"", call.text(13));
  if (call.optional_integer(14))
    text += fmt::format(",\"stream\":\"{:#x}\"", number(14));
  return text + fmt::format(",\"nccl_root\":{},\"nccl_peer\":{},\"group_depth\":{}", number(15), number(16),
                            number(17));
}

using detail::microseconds;

using MessageKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

MessageKey key_of(const Statement& row) {
  return {row.integer(0), row.integer(1), row.optional_integer(2).value_or(-1),
          row.optional_integer(3).value_or(-1)};
}

void write_flow(std::FILE* out, std::uint64_t id, const Statement& send, const Statement& receive) {
  fmt::print(
      out,
      ",\n{{\"ph\":\"s\",\"name\":\"message\",\"cat\":\"p2p\",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{}}}",
      id, send.integer(0), send.integer(4), microseconds(send.integer(5)));
  fmt::print(out,
             ",\n{{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"message\",\"cat\":\"p2p\",\"id\":{},\"pid\":{},"
             "\"tid\":{},\"ts\":{}}}",
             id, receive.integer(1), receive.integer(4), microseconds(receive.integer(5)));
}

std::uint64_t write_flows(const Database& database, std::FILE* out) {
  auto sends = database.prepare(kSendsSql);
  auto receives = database.prepare(kReceivesSql);
  std::uint64_t flows = 0;
  bool more_sends = sends.step();
  bool more_receives = receives.step();
  while (more_sends && more_receives) {
    const auto send_key = key_of(sends);
    const auto receive_key = key_of(receives);
    if (send_key < receive_key) {
      more_sends = sends.step();
    } else if (receive_key < send_key) {
      more_receives = receives.step();
    } else {
      write_flow(out, ++flows, sends, receives);
      more_sends = sends.step();
      more_receives = receives.step();
    }
  }
  return flows;
}

void write_process_names(const Database& database, std::FILE* out) {
  auto ranks = database.prepare("SELECT rank, host FROM ranks ORDER BY rank");
  while (ranks.step())
    fmt::print(out, ",\n{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":{}}}}}",
               ranks.integer(0),
               nlohmann::json(fmt::format("rank {} ({})", ranks.integer(0), ranks.text(1)))
                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

} // namespace

ChromeExportCounts export_chrome_trace(const Database& database, std::FILE* out) {
  if (!database.has_rows("mpi_calls"))
    throw AnalysisError(
        database.path().string() +
        ": no traced calls (mpi_calls is empty): record with --mode trace to export a timeline");
  const auto names = detail::query_function_names(database);
  std::map<int, std::string> quoted; // names JSON-escaped once, not per event
  for (const auto& [id, name] : names)
    quoted.emplace(id, nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));

  ChromeExportCounts counts;
  fmt::print(out, "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  fmt::print(out, "{{\"ph\":\"M\",\"name\":\"commlens\",\"pid\":0,\"args\":{{\"database\":{}}}}}",
             nlohmann::json(database.path().string())
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  write_process_names(database, out);
  auto calls = database.prepare(fmt::format(
      kCallsSql, database.has_table("nccl_calls") && database.has_table("nccl_ops") ? kNcclJoin : kNoNccl));
  while (calls.step()) {
    const auto name = quoted.find(static_cast<int>(calls.integer(3)));
    const std::string nccl = nccl_arguments(calls);
    fmt::print(
        out,
        ",\n{{\"ph\":\"X\",\"cat\":\"{}\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{"
        "\"call_id\":\"{}\",\"bytes_sent\":{},\"bytes_recv\":{},\"peer\":{},\"tag\":{},\"comm\":\"{:#x}\"{}}}"
        "}"
        "}",
        nccl.empty() ? "mpi" : "nccl", name != quoted.end() ? name->second : "\"?\"", calls.integer(1),
        calls.integer(2), microseconds(calls.integer(4)),
        microseconds(std::max<std::int64_t>(0, calls.integer(5) - calls.integer(4))), calls.integer(0),
        calls.integer(6), calls.integer(7), calls.integer(8), calls.optional_integer(9).value_or(-1),
        calls.optional_integer(10).value_or(-1), nccl);
    ++counts.calls;
  }
  counts.flows = write_flows(database, out);
  const auto gpu = detail::write_chrome_gpu_events(database, out);
  counts.copies = gpu.copies;
  counts.kernels = gpu.kernels;
  counts.nvtx_ranges = gpu.nvtx_ranges;
  fmt::print(out, "\n]}}\n");
  return counts;
}

} // namespace commlens::analysis
