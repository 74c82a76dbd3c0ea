#include "finalize_topology.hpp"

#include <sys/stat.h>

#include <cstdint>
#include <vector>

namespace commlens::pmpi {

namespace {

// The folder's identity on this host: device and inode (0, 0 when it does not exist, as for a rank
// that could not create it; such a rank is a folder of its own).
std::vector<std::int64_t> folder_identity(const std::string& directory) {
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0) {
    return {0, 0};
  }
  return {static_cast<std::int64_t>(info.st_dev), static_cast<std::int64_t>(info.st_ino)};
}

// The first rank of `comm` whose folder is this rank's: the folder's colour.
int folder_colour(MPI_Comm comm, const std::string& directory) {
  int rank = 0;
  int size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const std::vector<std::int64_t> mine = folder_identity(directory);
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(size));
  PMPI_Allgather(mine.data(), 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, comm);
  if (mine[0] == 0 && mine[1] == 0) {
    return rank;
  }
  for (int other = 0; other < size; ++other) {
    const auto index = 2 * static_cast<std::size_t>(other);
    if (all[index] == mine[0] && all[index + 1] == mine[1]) {
      return other;
    }
  }
  return rank;
}

} // namespace

FinalizeTopology::FinalizeTopology(const std::string& output_directory) {
  PMPI_Comm_dup(MPI_COMM_WORLD, &world_);
  PMPI_Comm_rank(world_, &world_rank_);
  PMPI_Comm_split_type(world_, MPI_COMM_TYPE_SHARED, world_rank_, MPI_INFO_NULL, &host_);
  int host_rank = 0;
  PMPI_Comm_rank(host_, &host_rank);
  PMPI_Comm_split(world_, host_rank == 0 ? 0 : MPI_UNDEFINED, world_rank_, &host_leaders_);
  PMPI_Comm_split(host_, folder_colour(host_, output_directory), world_rank_, &folder_);
  PMPI_Comm_rank(folder_, &folder_rank_);
}

FinalizeTopology::~FinalizeTopology() {
  for (MPI_Comm* comm : {&folder_, &host_leaders_, &host_, &world_}) {
    if (*comm != MPI_COMM_NULL) {
      PMPI_Comm_free(comm);
    }
  }
}

} // namespace commlens::pmpi
