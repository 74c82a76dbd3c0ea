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

std::unordered_map<std::int64_t, CommunicatorMembers> communicator_members(const Database& database) {
  std::unordered_map<std::int64_t, CommunicatorMembers> members;
  auto query = database.prepare("SELECT id, rank, local_rank, size FROM communicators WHERE is_inter = 0");
  while (query.step()) {
    auto& communicator = members[query.integer(0)];
    communicator.size = static_cast<int>(query.integer(3));
    communicator.local_ranks[static_cast<int>(query.integer(1))] = static_cast<int>(query.integer(2));
  }
  return members;
}

WaitStates find_wait_states(const Database& database, const ReportFilter& filter) {
  // What each function is, by id (function ids are below 2048: mpi_call_rows.code's 11 bits).
  constexpr std::size_t kFunctionIds = 2048;
  std::vector<std::optional<Role>> roles(kFunctionIds);
  std::vector<std::optional<CollectiveShape>> shapes(kFunctionIds);
  std::set<int> functions, request_functions;
  for (const auto& [id, role] : by_id(database, point_to_point_roles())) {
    roles.at(static_cast<std::size_t>(id)) = role;
    functions.insert(id);
    if (role == Role::NonblockingReceive || role == Role::NonblockingSsend)
      request_functions.insert(id);
  }
  for (const auto& [id, shape] : by_id(database, collective_shapes())) {
    shapes.at(static_cast<std::size_t>(id)) = shape;
    functions.insert(id);
  }

  WaitAccumulator waits(filter);
  PointToPointMatcher point_to_point(waits);
  CollectiveMatcher collectives(communicator_members(database), waits);
  // An NVTX range filter shadows mpi_calls with a TEMP view of the selected calls.
  const bool stored_rows = !filter.nvtx_range && database.has_table("mpi_call_rows");
  scan_traced_calls(database, stored_rows, functions, request_functions, [&](const ScannedCall& call) {
    const auto function = static_cast<std::size_t>(call.function_id);
    if (const auto& role = roles[function])
      point_to_point.add(call, *role);
    else if (const auto& shape = shapes[function])
      collectives.add(call, *shape);
  });
  point_to_point.finish();
  return {waits.buckets([&](const WaitBucket& bucket) {
            return point_to_point.reliable(bucket.kind, bucket.comm_id, bucket.rank, bucket.partner);
          }),
          collectives.instances(), collectives.last_entries()};
}

} // namespace commlens::analysis::detail
