#pragma once
// The sending side of the rendezvous (rendezvous_protocol.hpp): the copy of a message into a device
// block, the header that replaces the message, and the replies that release the blocks. The send
// itself never waits for the receiver: a layer above PMPI cannot move the receiver's side of the
// transfer forward while that process sits in an unrelated blocking MPI call, and MPI's progress
// rule says a send whose receive is posted completes anyway. The block copy buys that guarantee.
#include "buffer_pool.hpp"
#include "ipc_handle_cache.hpp"
#include "peer_directory.hpp"
#include "rendezvous_protocol.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace commlens::runtime {

class RendezvousSender {
public:
  // pinned: where data goes through the host when a receiver asks for it.
  RendezvousSender(const pmpi::RuntimeChannel& channel, PeerDirectory& peers, IpcHandleCache& cache,
                   BufferPool& pinned);
  ~RendezvousSender();

  // A header to send in place of `bytes` of device memory at buf (contiguous) to dest_world, valid
  // until its reply arrives; null with *why set when this message cannot go as a rendezvous (the
  // caller takes the host path). The copy into the block has finished when this returns.
  const RendezvousHeader* offer(const void* buf, std::size_t bytes, int dest_world, std::string* why);
  // Handles the replies that have arrived: blocks released, data sent through the host where a
  // receiver asked for it. Every runtime point-to-point call starts with this.
  void progress();
  // Waits for every reply (MPI_Finalize: receivers have finished every matched receive by then).
  void drain();

private:
  struct Outstanding {
    RendezvousHeader header;
    PooledBuffer block;
    std::int32_t reply = 0;
    MPI_Request reply_request = MPI_REQUEST_NULL;
    int dest_world = -1;
  };
  void complete(Outstanding& sent);

  MPI_Comm channel_;
  std::uint64_t key_[2];
  int world_rank_ = 0;
  int pid_ = 0;
  PeerDirectory& peers_;
  IpcHandleCache& cache_;
  BufferPool& pinned_;
  BufferPool blocks_;
  std::mutex mutex_; // MPI_THREAD_MULTIPLE: threads send concurrently
  std::atomic<std::uint32_t> next_sequence_{0};
  std::vector<std::unique_ptr<Outstanding>> outstanding_;
};

} // namespace commlens::runtime
