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
  CallLaneProbe probe(database);
  const auto last =
      call_lanes::last_call_before(probe, call_lanes::lane_ids(lane.rank, lane.thread), time_ns);
  if (!last || last->end_ns <= time_ns)
    return std::nullopt;
  return CallsById(database).find(last->id);
}

CallLaneProbe::CallLaneProbe(const Database& database)
    : oldest_(database.prepare(call_lanes::kProbeOldestSql)),
      newest_(database.prepare(call_lanes::kProbeNewestSql)) {}

std::optional<call_lanes::LaneCall> CallLaneProbe::operator()(std::int64_t from_id, std::int64_t to_id,
                                                              bool newest) {
  Statement& query = newest ? newest_ : oldest_;
  query.reset();
  query.bind(1, from_id).bind(2, to_id);
  if (!query.step())
    return std::nullopt;
  return call_lanes::LaneCall{query.integer(0), query.integer(1), query.integer(2)};
}

CallsById::CallsById(const Database& database)
    : query_(database.prepare(fmt::format("SELECT {} FROM mpi_calls WHERE id = ?1", kCallColumns))) {}

std::optional<TimelineCall> CallsById::find(std::int64_t id) {
  query_.reset();
  query_.bind(1, id);
  return query_.step() ? std::optional(read_call(query_, 0)) : std::nullopt;
}

} // namespace commlens::analysis
