#pragma once
// The wire format of device-buffer point-to-point through the runtime (docs/runtime.md).
//
// A message of at least kRendezvousMinBytes from a device buffer, to a rank on the same node that
// can map the sender's GPU, travels as a rendezvous: the sender copies it into a device block of its
// own (so the send completes as MPI requires, whatever the receiver does next) and sends, in place
// of the message, on the user's communicator with the user's tag, a RendezvousHeader naming that
// block. MPI's matching therefore stays MPI's: wildcards, ordering, cancellation of nothing else.
// The receiver recognises the header (its size and the job's random key), copies the block into
// its buffer over CUDA IPC and replies on the runtime channel, which releases the block. A
// receiver that cannot map the block replies kSendThroughHost and receives the bytes on the
// channel instead.
#include "node_segment.hpp"

#include <cstdint>

namespace commlens::runtime {

inline constexpr std::size_t kRendezvousMinBytes = std::size_t{64} << 10;

struct RendezvousHeader {
  std::uint64_t key[2];  // the job's RuntimeChannel key
  std::uint64_t bytes;   // the message
  PublishedBuffer block; // the sender's copy of it
  std::int32_t sender_pid;
  std::int32_t sender_world_rank;
  std::int32_t sequence; // names the reply and the host-path data on the channel
  std::int32_t unused = 0;
  std::uint64_t padding = 0;
};
static_assert(sizeof(RendezvousHeader) == 128, "a fixed size: receivers recognise headers by it");

enum RendezvousReply : std::int32_t { kCopied = 1, kSendThroughHost = 2 };

// Sequences run below 2^14, so both tags stay within the 32767 every MPI allows. Replies and data
// of one sequence travel in opposite directions; the parity keeps a reply to one rank's transfer
// apart from data of the other direction's transfer with the same number.
inline constexpr std::int32_t kSequences = 1 << 14;
inline int reply_tag(std::int32_t sequence) noexcept {
  return 2 * sequence;
}
inline int data_tag(std::int32_t sequence) noexcept {
  return 2 * sequence + 1;
}

} // namespace commlens::runtime
