#pragma once
// Wait at collectives (wait_states.hpp): the n-th blocking collective a rank makes on a
// communicator is every member's n-th (MPI requires the same order on all of them), so the calls
// gather into instances as the scan meets them; an instance is measured once every member is in.
#include "wait_accumulator.hpp"

#include <deque>
#include <unordered_map>

namespace commlens::analysis::detail {

enum class CollectiveShape {
  AllToAll, // everyone waits for the last to enter: MPI_Allreduce, MPI_Barrier, MPI_Alltoall, ...
  OneToAll, // the non-roots wait for the root: MPI_Bcast, MPI_Scatter, MPI_Scatterv
  AllToOne, // the root waits for the last non-root: MPI_Reduce, MPI_Gather, MPI_Gatherv
};

// The members of a communicator: how many, and each world rank's rank in it.
struct CommunicatorMembers {
  int size = 0;
  std::unordered_map<int, int> local_ranks;
};

class CollectiveMatcher {
public:
  CollectiveMatcher(std::unordered_map<std::int64_t, CommunicatorMembers> members, WaitAccumulator& waits)
      : members_(std::move(members)), waits_(waits) {}

  void add(const ScannedCall& call, CollectiveShape shape);
  // How many instances each rank entered last, per communicator: the rank the others waited for.
  const std::map<std::pair<std::int64_t, int>, std::uint64_t>& last_entries() const { return last_; }
  const std::map<std::int64_t, std::uint64_t>& instances() const { return instances_; }

private:
  struct Entry {
    int rank = 0;
    int local_rank = -1;
    int phase = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t root = -1;
  };
  struct Instance {
    int function_id = 0;
    CollectiveShape shape = CollectiveShape::AllToAll;
    bool measured = false;
    std::vector<Entry> entries;
  };
  void measure(std::int64_t comm_id, const Instance& instance);
  void wait(std::int64_t comm_id, const Instance& instance, const Entry& entry, std::int64_t until_ns,
            int partner);

  std::unordered_map<std::int64_t, CommunicatorMembers> members_;
  WaitAccumulator& waits_;
  // Per communicator: each member's collectives so far, and the instances not yet complete (the
  // n-th at open[n - first_open]; they complete about in order, so few are open at a time).
  struct Communicator {
    const CommunicatorMembers* members = nullptr;
    std::unordered_map<int, std::uint64_t> calls_made;
    std::uint64_t first_open = 0;
    std::deque<Instance> open;
  };
  std::unordered_map<std::int64_t, Communicator> communicators_;
  std::map<std::pair<std::int64_t, int>, std::uint64_t> last_;
  std::map<std::int64_t, std::uint64_t> instances_;
};

} // namespace commlens::analysis::detail
