#include "timeline_call_rows.hpp"

#include <fmt/format.h>

namespace commlens::analysis {

TimelineCall read_call(const Statement& row, int first_column) {
  TimelineCall call;
  call.id = row.integer(first_column);
  call.function_id = static_cast<int>(row.integer(first_column + 1));
  call.start_ns = row.integer(first_column + 2);
  call.end_ns = row.integer(first_column + 3);
  call.bytes_sent = row.integer(first_column + 4);
  call.bytes_recv = row.integer(first_column + 5);
  call.peer = row.optional_integer(first_column + 6).value_or(-1);
  call.tag = row.optional_integer(first_column + 7);
  call.comm_id = row.optional_integer(first_column + 8);
  call.implementation = static_cast<int>(row.integer(first_column + 9));
  call.phase = static_cast<int>(row.integer(first_column + 10));
  return call;
}

std::optional<TimelineCall> call_running_at(const Database& database, const TimelineLane& lane,
                                            std::int64_t time_ns) {
  auto query = database.prepare(fmt::format("SELECT {} FROM mpi_calls WHERE rank = ?1 AND thread = ?2 "
                                            "AND start_ns < ?3 ORDER BY start_ns DESC LIMIT 1",
                                            kCallColumns));
  query.bind(1, lane.rank).bind(2, lane.thread).bind(3, time_ns);
  if (!query.step())
    return std::nullopt;
  auto call = read_call(query, 0);
  return call.end_ns > time_ns ? std::optional(call) : std::nullopt;
}

CallsById::CallsById(const Database& database)
    : query_(database.prepare(fmt::format("SELECT {} FROM mpi_calls WHERE id = ?1", kCallColumns))) {}

std::optional<TimelineCall> CallsById::find(std::int64_t id) {
  query_.reset();
  query_.bind(1, id);
  return query_.step() ? std::optional(read_call(query_, 0)) : std::nullopt;
}

} // namespace commlens::analysis
