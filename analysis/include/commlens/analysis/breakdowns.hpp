#pragma once
// Breakdowns the viewer draws as charts and tooltips, each one small read-only query: time in MPI
// per rank and function and per phase and function (stacked bars), CUDA copies per path, rank and
// GPU (bandwidth bars) and per path over time, the kernels and messages of a timeline window, and
// the runtime's record of one call (runtime_ops). Tables a run lacks give empty results.
#include "commlens/analysis/database.hpp"
#include "commlens/analysis/timeline.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace commlens::analysis {

// One function's calls in one group (a rank, or an MPI_Pcontrol phase), summed over the rest
// (call_stats, so both modes).
struct GroupFunctionTime {
  int group = 0; // the rank or the phase
  std::string function;
  std::uint64_t calls = 0;
  std::int64_t time_ns = 0;
};

enum class FunctionTimeGroup { Rank, Phase };

// By group, then most time first.
std::vector<GroupFunctionTime> query_function_times(const Database& database, FunctionTimeGroup group);

// The copies of one route made by one rank on one GPU.
struct CopyPathUsage {
  CopyRoute route;
  int rank = 0;
  int device = 0;
  std::uint64_t copies = 0;
  std::uint64_t bytes = 0;
  std::int64_t busy_ns = 0;      // summed durations on the GPU of the copies timed there
  std::uint64_t timed_bytes = 0; // their bytes (every copy's where CUPTI saw them)
  // Bandwidth while copying: the timed copies' bytes over their summed durations, in GB/s; empty
  // when no copy was timed or every one took no time.
  std::optional<double> gb_per_s() const;
};

// By route (path, link, direction, host memory), rank and device.
std::vector<CopyPathUsage> query_copy_path_usage(const Database& database);

// The first start and last end of the copies of one route, rank and GPU; empty without any.
std::optional<std::pair<std::int64_t, std::int64_t>>
query_copy_span(const Database& database, const CopyRoute& route, int rank, int device);

// Bytes one route (over every rank and GPU) moved in each of `bins` equal slices of
// [start_ns, end_ns): a copy counts in the slice it starts in.
struct CopyPathSeries {
  CopyRoute route;
  std::vector<std::uint64_t> bytes_per_bin;
};

std::vector<CopyPathSeries> query_copy_path_series(const Database& database, std::int64_t start_ns,
                                                   std::int64_t end_ns, int bins);

// Who sent how much to whom, by kind of traffic (both modes: call_stats). MPI point-to-point: the
// senders' calls with a peer. NCCL point-to-point: ncclSend, whose peer (an NCCL rank) the members'
// communicators rows turn into a run rank. NCCL collectives have no single receiver: each call's
// contribution (bytes_sent) is spread evenly over the other members of its communicator, so a
// row adds up to what the rank put into collectives; `operations` is then the calls each pair
// shared.
enum class TrafficKind { MpiPointToPoint, NcclPointToPoint, NcclCollective };

struct PartnerCell {
  TrafficKind kind = TrafficKind::MpiPointToPoint;
  int from = 0;
  int to = 0;
  std::uint64_t operations = 0; // messages, or collective calls
  double bytes = 0;
};

// By kind, then (from, to).
std::vector<PartnerCell> query_partner_traffic(const Database& database);

// One row of cuda_kernels.
struct TimelineKernel {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  int device = 0;
  std::int64_t stream = 0;
  std::string name;
  std::optional<std::int64_t> mpi_call_id;
  std::int64_t correlation_id = 0; // CUPTI's: that of the API call that launched it (cuda_api_calls.hpp)
};

// Kernels of `rank` overlapping [start_ns, end_ns), ascending start.
std::vector<TimelineKernel> query_timeline_kernels(const Database& database, int rank, std::int64_t start_ns,
                                                   std::int64_t end_ns);

// One point-to-point message whose send and receive both start in a window: from the send's start on
// the sender's lane to the receive's completion (its end, or for MPI_Irecv its request's completion
// in a wait or test) on the receiver's lane.
struct TimelineMessage {
  TimelineLane sender;
  std::int64_t send_call_id = 0;
  std::int64_t send_ns = 0;
  TimelineLane receiver;
  std::int64_t recv_call_id = 0;
  std::int64_t received_ns = 0;
  std::int64_t bytes = 0;
};

// Messages between the sends and receives starting in [start_ns, end_ns), matched as MPI orders
// them: the n-th send from a to b with one tag on one communicator is received by b's n-th receive
// from a with that tag there (counting from the run's start, so a window cuts no pair wrongly).
// Receives from MPI_ANY_SOURCE whose source was not resolved match nothing. Empty (and cheap to
// find so) when the window holds more than `max_calls` sends or receives: the lines would be a blur
// at that zoom. The counting reads every earlier call of the window's posting ranks, so callers
// keep it to traces of moderate size.
std::vector<TimelineMessage> query_timeline_messages(const Database& database, std::int64_t start_ns,
                                                     std::int64_t end_ns, std::size_t max_calls);

// What the GPU runtime recorded for one MPI call (its first runtime_ops row).
struct RuntimeDecision {
  std::string algorithm;
  std::string decision; // runtime, ab_baseline, fallback
  std::optional<std::string> reason;
  std::optional<std::string> decision_source;
  std::int64_t bytes_peer = 0;
  std::int64_t bytes_host = 0;
  std::int64_t ipc_opens = 0;
};

std::optional<RuntimeDecision> query_runtime_decision(const Database& database, std::int64_t mpi_call_id);

} // namespace commlens::analysis
