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
//   kCopied      the receiver has the data; the sender frees the slot (kFree) and any block.
// The sender never waits for a receiver that has not claimed: MPI's progress rule says a send
// whose receive is posted completes whatever the receiver does next (an unrelated blocking MPI
// call, for one), and a layer above PMPI cannot move the receiver's side forward. So a claimed
// message costs one copy, a withdrawn one two.
#include "node_segment.hpp"
#include "runtime_channel.hpp"

#include <atomic>
#include <cstdint>

namespace commlens::runtime {

inline constexpr std::size_t kRendezvousMinBytes = std::size_t{64} << 10;

enum HandoffState : std::uint32_t {
  kFree = 0,
  kOffered,
  kClaimed,
  kCopied,
  kWithdrawn,
  kInBlock,
  kHostRequested
};

struct alignas(128) HandoffSlot {
  std::atomic<std::uint32_t> state;
  PublishedBuffer block; // valid from kInBlock
};

// Slots per sender, used in turn: a slot still in use (its receiver has not copied yet) sends that
// message through the host instead.
inline constexpr std::int32_t kSlots = 1024;
static_assert(kSlots * sizeof(HandoffSlot) <= pmpi::kChannelBytesPerRank,
              "the slots fit the channel's share");

inline HandoffSlot* handoff_slots(const pmpi::RuntimeChannel& channel, int node_rank) noexcept {
  return reinterpret_cast<HandoffSlot*>(static_cast<char*>(channel.node_memory) +
                                        pmpi::kChannelBytesPerRank * static_cast<std::size_t>(node_rank));
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
