#pragma once
// The wire format of device-buffer point-to-point through the runtime (docs/runtime.md).
//
// A message of at least kRendezvousMinBytes from a device buffer, to a rank on the same node that
// can map the sender's GPU, travels as a rendezvous. In place of the message the sender sends, on
// the user's communicator with the user's tag, a RendezvousHeader naming its buffer (a CUDA IPC
// handle of the allocation), so MPI's matching stays MPI's: wildcards, ordering, errors. The
// hand-over itself runs through a HandoffSlot of the sender's in the node segment of the runtime
// channel:
//   kOffered     the header is out; the receiver may copy straight from the sender's buffer.
//   kClaimed     the receiver does so (it maps the buffer first, then claims).
//   kWithdrawn   the receiver did not claim in time: the sender copies the message into a device
//   kInBlock     block of its own, named in the slot, and completes the send; the receiver copies
//                from the block whenever it gets to the message.
//   kHostRequested  the receiver cannot map either: the sender sends the bytes on the channel.
//   kHostOnce    the same for this message only, asked of a waiting sender (kOfferedWaiting): a
//                first use whose mapping would take longer than the host path; the receiver opens
//                the handle in the background for the next message.
//   kCopied      the receiver has the data; the sender frees the slot (kFree) and any block.
// The sender never waits for a receiver that has not claimed: MPI's progress rule says a send
// whose receive is posted completes whatever the receiver does next (an unrelated blocking MPI
// call, for one), and a layer above PMPI cannot move the receiver's side forward. So a claimed
// message costs one copy, a withdrawn one two.
//
// What needs the sender's own work runs only while the sender is waiting for this very message:
//   kOfferedWaiting  as kOffered, and the sender is in its wait (a blocking send from the start,
//                    a nonblocking one once its wait/test call settles it), serving kHostOnce and,
//                    when stripe_ring says its ring is reserved for the message, kClaimedStriped.
// Striping (Temuçin's "High-Performance Interconnect-Aware MPI communication for Deep Learning Workloads",
// ch. 4): a large message may travel over two paths at once, the peer copy for its head and the host path
// (sender's GPU -> the sender's pinned ring of stages -> receiver's GPU, over both PCIe links) for its tail:
//   kClaimedStriped  the receiver claimed it striped: bytes [host_from, bytes) go through the
//                    sender's ring (stage_ring.hpp), the rest as a peer copy; the sender writes its
//                    share into the ring (its CUDA error travels with the ring's counters).
#include "runtime_channel.hpp"
#include "selection_thresholds.hpp"
#include "transport/node_segment.hpp"
#include "transport/stage_ring.hpp"

#include <atomic>
#include <cstdint>

namespace commlens::runtime {

using tuning::kRendezvousMinBytes;

enum HandoffState : std::uint32_t {
  kFree = 0,
  kOffered,
  kClaimed,
  kCopied,
  kWithdrawn,
  kInBlock,
  kHostRequested,
  kOfferedWaiting,
  kClaimedStriped,
  kHostOnce
};

struct alignas(128) HandoffSlot {
  std::atomic<std::uint32_t> state;
  std::uint32_t stripe_ring; // 1: the sender's ring is reserved for the message (valid from kOfferedWaiting)
  PublishedBuffer block;     // valid from kInBlock
  std::uint64_t host_from;   // kClaimedStriped: where the host path's share starts
};

// Slots per sender, used in turn: a slot still in use (its receiver has not copied yet) sends that
// message through the host instead.
inline constexpr std::int32_t kSlots = 1024;

inline char* channel_share(const contract::RuntimeChannel& channel, int node_rank) noexcept {
  return static_cast<char*>(channel.node_memory) +
         contract::kChannelBytesPerRank * static_cast<std::size_t>(node_rank);
}

inline HandoffSlot* handoff_slots(const contract::RuntimeChannel& channel, int node_rank) noexcept {
  return reinterpret_cast<HandoffSlot*>(channel_share(channel, node_rank));
}

// A rank's share: its slots, the counters of its ring, and from kRingStagesOffset (page aligned,
// so it can be pinned alone) the ring's stages.
inline constexpr std::size_t kRingCountersOffset = kSlots * sizeof(HandoffSlot);
inline constexpr std::size_t kRingStagesOffset = std::size_t{256} << 10;
static_assert(kRingCountersOffset + sizeof(StageRingCounters) <= kRingStagesOffset &&
                  kRingStagesOffset + kStageRingBytes <= contract::kChannelBytesPerRank,
              "the ring fits the channel's share");

// The ring of node rank `node_rank`; its stages must be pinned in this process before a copy
// (StripeRings).
inline StageRing stripe_ring(const contract::RuntimeChannel& channel, int node_rank) noexcept {
  char* const share = channel_share(channel, node_rank);
  return {reinterpret_cast<StageRingCounters*>(share + kRingCountersOffset), share + kRingStagesOffset};
}

struct RendezvousHeader {
  std::uint64_t key[2];   // the job's RuntimeChannel key
  std::uint64_t bytes;    // the message
  PublishedBuffer buffer; // the sender's buffer
  std::int32_t sender_pid;
  std::int32_t sender_world_rank;
  std::int32_t sender_node_rank; // whose slots
  std::int32_t slot;
};
static_assert(sizeof(RendezvousHeader) == 128, "a fixed size: receivers recognise headers by it");

// The host path's data for a slot, on the channel.
inline int data_tag(std::int32_t slot) noexcept {
  return slot;
}

} // namespace commlens::runtime
