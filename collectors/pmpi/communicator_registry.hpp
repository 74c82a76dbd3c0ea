#pragma once
// Which CommunicatorTable entry an MPI_Comm (or a window, file or matched message built on one)
// belongs to, and how its ranks map to world ranks. Lookups are lock-free (MPI_COMM_WORLD and
// MPI_COMM_SELF are compared first); registration runs on communicator-creating calls only.
//
// Ids are equal on every member: after creation the communicator's rank 0 broadcasts its run
// rank and its per-process creation counter, id = leader_run_rank * 2^32 + counter.
// MPI_COMM_WORLD is first_rank * 2^32 (0 for the job mpirun started), MPI_COMM_SELF of run rank r
// is r * 2^32 + 1; counters start at 2. "World ranks" stored for members and peers are run ranks
// (ProcessIdentity::run_rank), so the processes of spawned jobs never share numbers.
//
// Inter-communicators to another job (spawn, connect/accept, join, the parent of a spawned job)
// are registered by each side alone, agreeing over its own group: a collective over them would
// leave this side waiting for ever if the other program runs without commlens. Each side then has
// its own id for them and their remote members are stored as -1.
#include "commlens/profiler/profiler.hpp"
#include "mpi_header.hpp"

#include <cstdint>
#include <vector>

namespace commlens::pmpi {

// Immutable once published; kept until the process ends because pending requests point to it.
struct CommunicatorEntry {
  std::uint32_t index = kNoCommunicator; // in the profiler's CommunicatorTable
  std::int64_t id = 0;
  bool is_inter = false;
  int local_rank = 0;
  std::vector<int> members;        // world ranks of the (local) group
  std::vector<int> remote_members; // world ranks of the remote group (inter-communicators)

  // Ranks given to MPI calls address the remote group of an inter-communicator.
  const std::vector<int>& peer_group() const noexcept { return is_inter ? remote_members : members; }
  int group_size() const noexcept { return static_cast<int>(peer_group().size()); }
  std::int32_t world_rank_of(int rank) const noexcept {
    const auto& group = peer_group();
    return rank >= 0 && rank < static_cast<int>(group.size()) ? group[rank] : kNoPeer;
  }
};

class CallRecording;

// MPI_Init: registers MPI_COMM_WORLD and MPI_COMM_SELF.
void start_communicator_registry(Profiler& profiler);

const CommunicatorEntry* find_communicator(MPI_Comm comm) noexcept;

// After a creating call returned newcomm (nothing happens for MPI_COMM_NULL). Collective over the
// new communicator, or over the parent when the new one is not usable yet (MPI_Comm_idup).
void register_communicator(CallRecording& call, MPI_Comm newcomm, MPI_Comm parent, bool not_usable_yet);
// After a call that connected this job to another (nothing happens for MPI_COMM_NULL). Collective
// over this_side only: the processes of this job that made the call (MPI_COMM_SELF for a join).
void register_joined_communicator(FunctionId created_by, MPI_Comm intercomm, MPI_Comm this_side);
// Before MPI_Comm_free / MPI_Comm_disconnect: records the communicator on the call, marks it freed.
void forget_communicator(CallRecording& call, MPI_Comm comm);
void name_communicator(MPI_Comm comm, const char* name);

// Windows, files and matched messages map to the communicator they were created on.
void register_window(MPI_Win win, MPI_Comm comm);
void forget_window(CallRecording& call, MPI_Win win);
const CommunicatorEntry* find_window(MPI_Win win) noexcept;
void register_file(MPI_File file, MPI_Comm comm);
void forget_file(CallRecording& call, MPI_File file);
const CommunicatorEntry* find_file(MPI_File file) noexcept;
void remember_message(MPI_Message message, MPI_Comm comm);
const CommunicatorEntry* take_message(MPI_Message* message) noexcept;

} // namespace commlens::pmpi
