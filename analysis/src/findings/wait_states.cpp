#include "wait_states.hpp"

#include "collective_matcher.hpp"
#include "point_to_point_matcher.hpp"

namespace commlens::analysis::detail {
namespace {

using Role = PointToPointRole;

const std::map<std::string_view, Role>& point_to_point_roles() {
  static const std::map<std::string_view, Role> roles = {{"MPI_Send", Role::BlockingSend},
                                                         {"MPI_Ssend", Role::BlockingSend},
                                                         {"MPI_Bsend", Role::Send},
                                                         {"MPI_Rsend", Role::Send},
                                                         {"MPI_Isend", Role::Send},
                                                         {"MPI_Ibsend", Role::Send},
                                                         {"MPI_Irsend", Role::Send},
                                                         {"MPI_Issend", Role::NonblockingSsend},
                                                         {"MPI_Recv", Role::Receive},
                                                         {"MPI_Irecv", Role::NonblockingReceive},
                                                         {"MPI_Sendrecv", Role::SendReceive},
                                                         {"MPI_Sendrecv_replace", Role::SendReceive},
                                                         {"MPI_Isendrecv", Role::SendReceive},
                                                         {"MPI_Isendrecv_replace", Role::SendReceive},
                                                         {"MPI_Send_init", Role::PersistentSend},
                                                         {"MPI_Bsend_init", Role::PersistentSend},
                                                         {"MPI_Ssend_init", Role::PersistentSend},
                                                         {"MPI_Rsend_init", Role::PersistentSend},
                                                         {"MPI_Psend_init", Role::PersistentSend},
                                                         {"MPI_Recv_init", Role::PersistentReceive},
                                                         {"MPI_Precv_init", Role::PersistentReceive},
                                                         {"MPI_Mrecv", Role::MatchedReceive},
                                                         {"MPI_Imrecv", Role::MatchedReceive},
                                                         {"MPI_Wait", Role::Completion},
                                                         {"MPI_Waitall", Role::Completion},
                                                         {"MPI_Waitany", Role::Completion},
                                                         {"MPI_Waitsome", Role::Completion},
                                                         {"MPI_Test", Role::Completion},
                                                         {"MPI_Testall", Role::Completion},
                                                         {"MPI_Testany", Role::Completion},
                                                         {"MPI_Testsome", Role::Completion}};
  return roles;
}

const std::map<std::string_view, CollectiveShape>& collective_shapes() {
  static const std::map<std::string_view, CollectiveShape> shapes = {
      {"MPI_Barrier", CollectiveShape::AllToAll},
      {"MPI_Allreduce", CollectiveShape::AllToAll},
      {"MPI_Allgather", CollectiveShape::AllToAll},
      {"MPI_Allgatherv", CollectiveShape::AllToAll},
      {"MPI_Alltoall", CollectiveShape::AllToAll},
      {"MPI_Alltoallv", CollectiveShape::AllToAll},
      {"MPI_Alltoallw", CollectiveShape::AllToAll},
      {"MPI_Reduce_scatter", CollectiveShape::AllToAll},
      {"MPI_Reduce_scatter_block", CollectiveShape::AllToAll},
      {"MPI_Bcast", CollectiveShape::OneToAll},
      {"MPI_Scatter", CollectiveShape::OneToAll},
      {"MPI_Scatterv", CollectiveShape::OneToAll},
      {"MPI_Reduce", CollectiveShape::AllToOne},
      {"MPI_Gather", CollectiveShape::AllToOne},
      {"MPI_Gatherv", CollectiveShape::AllToOne}};
  return shapes;
}

// Function ids by name, for the names this database has.
template <typename Value>
std::unordered_map<int, Value> by_id(const Database& database,
                                     const std::map<std::string_view, Value>& by_name) {
  std::unordered_map<int, Value> out;
  auto query = database.prepare("SELECT id, name FROM functions");
  while (query.step())
    if (const auto found = by_name.find(query.text(1)); found != by_name.end())
      out.emplace(static_cast<int>(query.integer(0)), found->second);
  return out;
}

} // namespace

WaitStates find_wait_states(const Database& database, const ReportFilter& filter) {
  auto roles = by_id(database, point_to_point_roles());
  auto shapes = by_id(database, collective_shapes());
  std::map<std::pair<std::int64_t, int>, int> local_ranks;
  std::map<std::int64_t, int> sizes;
  auto members = database.prepare("SELECT id, rank, local_rank, size FROM communicators WHERE is_inter = 0");
  while (members.step()) {
    local_ranks[{members.integer(0), static_cast<int>(members.integer(1))}] =
        static_cast<int>(members.integer(2));
    sizes[members.integer(0)] = static_cast<int>(members.integer(3));
  }
  std::set<int> functions, request_functions;
  for (const auto& [id, role] : roles) {
    functions.insert(id);
    if (role == Role::NonblockingReceive || role == Role::NonblockingSsend)
      request_functions.insert(id);
  }
  for (const auto& [id, shape] : shapes)
    functions.insert(id);

  WaitAccumulator waits(filter);
  PointToPointMatcher point_to_point(std::move(roles), waits);
  CollectiveMatcher collectives(std::move(shapes), std::move(local_ranks), std::move(sizes), waits);
  scan_traced_calls(database, functions, request_functions, [&](const ScannedCall& call) {
    point_to_point.add(call);
    collectives.add(call);
  });
  point_to_point.finish();
  return {waits.buckets([&](const WaitBucket& bucket) {
            return point_to_point.reliable(bucket.kind, bucket.comm_id, bucket.rank, bucket.partner);
          }),
          collectives.instances(), collectives.last_entries()};
}

} // namespace commlens::analysis::detail
