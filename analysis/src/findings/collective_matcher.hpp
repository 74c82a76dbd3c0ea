#pragma once
// Wait at collectives (wait_states.hpp): the n-th blocking collective a rank makes on a
// communicator is every member's n-th (MPI requires the same order on all of them), so the calls
// gather into instances as the scan meets them; an instance is measured once every member is in.
#include "wait_accumulator.hpp"

#include <unordered_map>

namespace commlens::analysis::detail {

enum class CollectiveShape {
  AllToAll, // everyone waits for the last to enter: MPI_Allreduce, MPI_Barrier, MPI_Alltoall, ...
  OneToAll, // the non-roots wait for the root: MPI_Bcast, MPI_Scatter, MPI_Scatterv
  AllToOne, // the root waits for the last non-root: MPI_Reduce, MPI_Gather, MPI_Gatherv
};

class CollectiveMatcher {
public:
  // `local_ranks`: (communicator, world rank) -> rank in the communicator; `sizes`: members.
  CollectiveMatcher(std::unordered_map<int, CollectiveShape> shapes,
                    std::map<std::pair<std::int64_t, int>, int> local_ranks,
                    std::map<std::int64_t, int> sizes, WaitAccumulator& waits)
      : shapes_(std::move(shapes)), local_ranks_(std::move(local_ranks)), sizes_(std::move(sizes)),
        waits_(waits) {}

  void add(const ScannedCall& call);
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
    std::vector<Entry> entries;
  };
  void measure(std::int64_t comm_id, const Instance& instance);
  void wait(std::int64_t comm_id, const Instance& instance, const Entry& entry, std::int64_t until_ns,
            int partner);

  std::unordered_map<int, CollectiveShape> shapes_;
  std::map<std::pair<std::int64_t, int>, int> local_ranks_;
  std::map<std::int64_t, int> sizes_;
  WaitAccumulator& waits_;
  std::map<std::pair<std::int64_t, int>, std::uint64_t> calls_made_; // (comm, rank) -> collectives so far
  std::map<std::pair<std::int64_t, std::uint64_t>, Instance> open_;  // (comm, n) -> calls so far
  std::map<std::pair<std::int64_t, int>, std::uint64_t> last_;
  std::map<std::int64_t, std::uint64_t> instances_;
};

} // namespace commlens::analysis::detail
