#pragma once
// The rings of host stages that striped rendezvous messages use (rendezvous_protocol.hpp), as
// this process pins them: a sender pins its own ring, a receiver the ring of each sender it takes a
// striped message from, each once, on first use (pinning 32 MiB takes milliseconds). A ring that
// cannot be pinned (the node's shared memory full, say) is never used for striping here.
#include "point_to_point/rendezvous_protocol.hpp"

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace commlens::runtime {

class StripeRings {
public:
  explicit StripeRings(const contract::RuntimeChannel& channel);
  StripeRings(const StripeRings&) = delete;
  StripeRings& operator=(const StripeRings&) = delete;
  ~StripeRings() { unpin_all(); }

  // The ring of node rank `node_rank`, pinned here; nullopt when it cannot be.
  std::optional<StageRing> ring(int node_rank);
  // Before the channel's memory is unmapped (MPI_Finalize).
  void unpin_all();
  // Why a ring could not be pinned (the first time it happened); empty when none failed.
  std::string problem();

private:
  enum class Pinning : std::int8_t { NotTried, Pinned, Failed };
  const contract::RuntimeChannel& channel_;
  std::mutex mutex_;
  std::vector<Pinning> pinning_; // per node rank
  std::string problem_;
};

} // namespace commlens::runtime
