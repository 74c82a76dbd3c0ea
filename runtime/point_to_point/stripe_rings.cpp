#include "point_to_point/stripe_rings.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

namespace commlens::runtime {

StripeRings::StripeRings(const contract::RuntimeChannel& channel)
    : channel_(channel), pinning_(channel.node_world_ranks.size(), Pinning::NotTried) {}

std::optional<StageRing> StripeRings::ring(int node_rank) {
  if (channel_.node_memory == nullptr || node_rank < 0 ||
      static_cast<std::size_t>(node_rank) >= pinning_.size()) {
    return std::nullopt;
  }
  const StageRing ring = stripe_ring(channel_, node_rank);
  std::lock_guard lock(mutex_);
  Pinning& pinning = pinning_[static_cast<std::size_t>(node_rank)];
  if (pinning == Pinning::NotTried) {
    // Portable: the copy engines of whichever GPU this process uses may read and write it.
    const cudaError_t pinned = cudaHostRegister(ring.stages, kStageRingBytes, cudaHostRegisterPortable);
    pinning = pinned == cudaSuccess ? Pinning::Pinned : Pinning::Failed;
    if (pinned != cudaSuccess) {
      cudaGetLastError();
    }
    if (pinned != cudaSuccess && problem_.empty()) {
      // Said once per process: the user asked for striping and should know it does not happen.
      problem_ =
          fmt::format("pinning the host ring of node rank {} failed ({}); a striping rank needs {} MiB "
                      "free in /dev/shm",
                      node_rank, cudaGetErrorString(pinned), kStageRingBytes >> 20);
      fmt::print(stderr, "commlens: striped point-to-point unavailable here: {}\n", problem_);
    }
  }
  return pinning == Pinning::Pinned ? std::optional<StageRing>(ring) : std::nullopt;
}

std::string StripeRings::problem() {
  std::lock_guard lock(mutex_);
  return problem_;
}

void StripeRings::unpin_all() {
  std::lock_guard lock(mutex_);
  for (std::size_t node_rank = 0; node_rank < pinning_.size(); ++node_rank) {
    if (pinning_[node_rank] == Pinning::Pinned) {
      cudaHostUnregister(stripe_ring(channel_, static_cast<int>(node_rank)).stages);
    }
    pinning_[node_rank] = Pinning::NotTried;
  }
}

} // namespace commlens::runtime
