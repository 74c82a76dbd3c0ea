#pragma once
// Reading single mpi_calls rows as TimelineCall, shared by the raw and the tiled timeline paths.
#include "commlens/analysis/timeline.hpp"
#include "commlens/profiler/call_lanes.hpp"

#include <optional>
#include <string_view>

namespace commlens::analysis {

// The columns read_call expects, in order.
inline constexpr std::string_view kCallColumns =
    "id, function_id, start_ns, end_ns, bytes_sent, bytes_recv, peer, tag, comm_id, implementation, phase";

TimelineCall read_call(const Statement& row, int first_column);

// The call of `lane` that started before `time_ns` and is still running at it, if any. Calls on
// one thread do not overlap, so it can only be the thread's last call before `time_ns`.
std::optional<TimelineCall> call_running_at(const Database& database, const TimelineLane& lane,
                                            std::int64_t time_ns);

// The probe of call_lanes.hpp's seeks over this database's mpi_calls, two prepared statements.
class CallLaneProbe {
public:
  explicit CallLaneProbe(const Database& database);
  std::optional<call_lanes::LaneCall> operator()(std::int64_t from_id, std::int64_t to_id, bool newest);

private:
  Statement oldest_, newest_;
};

// Calls looked up by id (rowid), one prepared statement for many look-ups.
class CallsById {
public:
  explicit CallsById(const Database& database);
  std::optional<TimelineCall> find(std::int64_t id);

private:
  Statement query_;
};

} // namespace commlens::analysis
