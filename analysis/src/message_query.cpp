// Point-to-point messages of a timeline window, matched by MPI's non-overtaking order.
#include "commlens/analysis/breakdowns.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace commlens::analysis {
namespace {

constexpr std::string_view kSendFunctions =
    "('MPI_Send', 'MPI_Isend', 'MPI_Ssend', 'MPI_Issend', 'MPI_Bsend', "
    "'MPI_Ibsend', 'MPI_Rsend', 'MPI_Irsend')";
constexpr std::string_view kReceiveFunctions = "('MPI_Recv', 'MPI_Irecv')";

struct Endpoint {
  TimelineLane lane;
  std::int64_t call_id = 0;
  std::int64_t time_ns = 0;
  std::int64_t bytes = 0;
};

// (sender, receiver, tag, communicator): the messages MPI keeps in order.
using Channel = std::tuple<int, int, std::int64_t, std::int64_t>;

struct Side {
  std::map<Channel, std::vector<Endpoint>> endpoints; // in posting order
  std::map<Channel, std::int64_t> earlier;            // posted before the window
};

// The sends (or receives) posted in [start_ns, end_ns) by channel, then how many each channel had
// before. False when there are more than `max_calls`.
bool read_side(const Database& database, bool receives, std::int64_t start_ns, std::int64_t end_ns,
               std::size_t max_calls, Side& side) {
  const auto functions = receives ? kReceiveFunctions : kSendFunctions;
  // A receive ends when its data is there: the call's end, or its request's completion.
  const std::string time = receives ? "coalesce((SELECT MIN(r.complete_ns) FROM mpi_requests r WHERE "
                                      "r.rank = c.rank AND r.request_id = c.id), c.end_ns)"
                                    : "c.start_ns";
  const std::string selection =
      std::string("FROM mpi_calls c WHERE c.function_id IN (SELECT id FROM functions "
                  "WHERE name IN ") +
      std::string(functions) + ") AND c.peer >= 0 ";
  // `rank IN (...)` lets SQLite walk the (rank, start_ns) index rank by rank.
  auto query =
      database.prepare("SELECT c.rank, c.thread, c.id, c.peer, coalesce(c.tag, -1), "
                       "coalesce(c.comm_id, -1), " +
                       time + ", " + (receives ? "c.bytes_recv " : "c.bytes_sent ") + selection +
                       "AND c.rank IN (SELECT rank FROM ranks) AND c.start_ns >= ?1 AND c.start_ns < ?2 "
                       "ORDER BY c.start_ns, c.id LIMIT ?3");
  query.bind(1, start_ns).bind(2, end_ns).bind(3, static_cast<std::int64_t>(max_calls) + 1);
  std::size_t calls = 0;
  while (query.step()) {
    if (++calls > max_calls)
      return false;
    const int rank = static_cast<int>(query.integer(0)), peer = static_cast<int>(query.integer(3));
    const Channel channel{receives ? peer : rank, receives ? rank : peer, query.integer(4), query.integer(5)};
    side.endpoints[channel].push_back(
        {{rank, query.integer(1)}, query.integer(2), query.integer(6), query.integer(7)});
  }
  // One pass per posting rank over its earlier calls (the (rank, start_ns) index), not one per channel.
  auto earlier = database.prepare("SELECT c.peer, coalesce(c.tag, -1), coalesce(c.comm_id, -1), COUNT(*) " +
                                  selection + "AND c.rank = ?1 AND c.start_ns < ?2 GROUP BY 1, 2, 3");
  std::vector<int> counted;
  for (const auto& [channel, endpoints] : side.endpoints) {
    const int rank = receives ? std::get<1>(channel) : std::get<0>(channel);
    if (std::find(counted.begin(), counted.end(), rank) != counted.end())
      continue;
    counted.push_back(rank);
    earlier.reset();
    earlier.bind(1, rank).bind(2, start_ns);
    while (earlier.step()) {
      const int peer = static_cast<int>(earlier.integer(0));
      const Channel key{receives ? peer : rank, receives ? rank : peer, earlier.integer(1),
                        earlier.integer(2)};
      side.earlier[key] = earlier.integer(3);
    }
  }
  return true;
}

} // namespace

std::vector<TimelineMessage> query_timeline_messages(const Database& database, std::int64_t start_ns,
                                                     std::int64_t end_ns, std::size_t max_calls) {
  std::vector<TimelineMessage> messages;
  if (!database.has_rows("mpi_calls") || !database.has_table("mpi_requests") || end_ns <= start_ns)
    return messages;
  Side sends, receives;
  if (!read_side(database, false, start_ns, end_ns, max_calls, sends) ||
      !read_side(database, true, start_ns, end_ns, max_calls, receives))
    return messages;
  for (const auto& [channel, posted] : sends.endpoints) {
    const auto found = receives.endpoints.find(channel);
    if (found == receives.endpoints.end())
      continue;
    // The n-th send of the channel in the run meets its n-th receive.
    const auto offset = sends.earlier[channel] - receives.earlier[channel];
    for (std::size_t index = 0; index < posted.size(); ++index) {
      const auto receive_index = static_cast<std::int64_t>(index) + offset;
      if (receive_index < 0 || receive_index >= static_cast<std::int64_t>(found->second.size()))
        continue;
      const auto& send = posted[index];
      const auto& receive = found->second[static_cast<std::size_t>(receive_index)];
      messages.push_back({send.lane, send.call_id, send.time_ns, receive.lane, receive.call_id,
                          receive.time_ns, send.bytes});
    }
  }
  return messages;
}

} // namespace commlens::analysis
