#pragma once
// The sending side of the rendezvous (rendezvous_protocol.hpp): the offer of a buffer, waiting
// while the receiver copies or taking the message back into a block of its own, and the
// bookkeeping of slots and blocks until every receiver has its data.
#include "point_to_point/peer_directory.hpp"
#include "point_to_point/rendezvous_protocol.hpp"
#include "point_to_point/stripe_rings.hpp"
#include "transport/buffer_pool.hpp"
#include "transport/ipc_handle_cache.hpp"

#include <atomic>
#include <chrono>
#include <list>
#include <mutex>
#include <string>

namespace commlens::runtime {

class RendezvousSender {
public:
  // pinned: where data goes through the host when a receiver asks for it. stripe_from: messages of
  // at least so many bytes are offered for striping while their sender waits (0: none are).
  RendezvousSender(const contract::RuntimeChannel& channel, PeerDirectory& peers, IpcHandleCache& cache,
                   BufferPool& pinned, StripeRings& rings, std::uint64_t stripe_from);

  // Offers `bytes` of device memory at buf (contiguous) to dest_world: fills *header, to be sent in
  // place of the message; false with *why set when this message cannot go as a rendezvous (the
  // caller takes the host path). waits: the caller settles right after sending the header (a
  // blocking send), so the message may be striped from the start.
  bool offer(const void* buf, std::size_t bytes, int dest_world, bool waits, RendezvousHeader* header,
             std::string* why);
  // After the header went out: returns once buf may be reused, either because the receiver copied
  // it (with this rank's help when striped: *host_bytes says how many bytes went through the host
  // path) or because the receiver had not claimed it after `patience` and it was copied into a block.
  int settle(std::int32_t slot, std::chrono::nanoseconds patience, std::uint64_t* host_bytes = nullptr);
  // The header could not be sent: the offer is void.
  void cancel(std::int32_t slot);
  // How long a send waits for its receiver before copying: about as long as the copy would take.
  static std::chrono::nanoseconds patience_for(std::size_t bytes) noexcept;
  // Frees the slots and blocks of messages their receivers have copied and sends through the host
  // what receivers asked for. Every runtime point-to-point call starts with this.
  void progress();
  // Settles every offer and waits until every receiver has its data (MPI_Finalize).
  void drain();

private:
  struct Outstanding {
    std::int32_t slot;
    const void* source; // the user's buffer while offered, then the block
    std::size_t bytes;
    int dest_world;
    PooledBuffer block;
    bool settled = false;      // the send completed (the user's buffer is no longer read)
    bool sent_by_host = false; // the bytes went on the channel
    bool holds_ring = false;   // offered for striping: this rank's ring is kept for it
  };
  Outstanding* find(std::int32_t slot);
  // Under mutex_: removes the entry (null: none).
  void drop(const Outstanding* sent);
  bool withdraw(Outstanding& sent, std::uint32_t offered_state);
  void serve_host_request(Outstanding& sent, bool receiver_cannot_map);
  // Under mutex_: reserves this rank's ring (pinned, with a copy lane) for a message of `bytes`.
  bool take_ring(std::size_t bytes);
  void release_ring(Outstanding& sent);
  // The receiver claimed it striped: this rank's share into its ring. Returns the bytes written.
  std::uint64_t write_host_share(const Outstanding& sent);

  MPI_Comm channel_;
  std::uint64_t key_[2];
  int world_rank_ = 0;
  int pid_ = 0;
  int node_rank_ = 0;
  HandoffSlot* slots_ = nullptr; // this rank's, in the node segment
  PeerDirectory& peers_;
  IpcHandleCache& cache_;
  BufferPool& pinned_;
  BufferPool blocks_;
  StripeRings& rings_;
  std::uint64_t stripe_from_;
  CopyLane ring_lane_;                  // opened with the first striped offer
  std::atomic<bool> ring_taken_{false}; // one striped message at a time per sender
  std::mutex mutex_;                    // MPI_THREAD_MULTIPLE: threads send concurrently
  std::int32_t next_slot_ = 0;
  std::list<Outstanding> outstanding_;       // stable addresses: settle() works on its entry unlocked
  std::atomic<bool> any_outstanding_{false}; // !outstanding_.empty(), read without the lock
};

} // namespace commlens::runtime
