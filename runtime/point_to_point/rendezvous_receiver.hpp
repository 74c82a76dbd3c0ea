#pragma once
// The receiving side of device-buffer point-to-point: where a receive is posted (a device buffer
// receives into a pinned image of its span), and what completing it takes: a rendezvous header
// (rendezvous_protocol.hpp) is replaced by the sender's data, copied over CUDA IPC from the sender's
// buffer or block, and the status corrected to the data's size; anything else is a plain message, copied to
// the device if staged. Every receive of a process whose peers may send rendezvous goes through here, host
// buffers too: a header can match any receive.
#include "buffer_pool.hpp"
#include "ipc_handle_cache.hpp"
#include "message_layout.hpp"
#include "probed_messages.hpp"
#include "rendezvous_protocol.hpp"
#include "runtime_channel.hpp"

namespace commlens::runtime {

struct PostedReceive {
  void* buf = nullptr;
  int count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  MessageLayout layout;
  bool device = false;
  PooledBuffer image; // device buffers: their span in pinned host memory

  // The buffer MPI receives into (with count and datatype as the user gave them).
  void* location() const noexcept {
    return device ? static_cast<char*>(image.data()) - layout.span_start : buf;
  }
};

struct ReceiveOutcome {
  int rc = MPI_SUCCESS;
  bool rendezvous = false;
  std::uint32_t ipc_opens = 0;
  std::uint64_t bytes = 0;      // received
  std::uint64_t bytes_host = 0; // through host memory
};

class RendezvousReceiver {
public:
  RendezvousReceiver(const pmpi::RuntimeChannel& channel, IpcHandleCache& cache, BufferPool& pinned);

  // Sets up a receive into buf. A device buffer gets its image (a non-contiguous span is filled
  // from the device first, so the gaps between elements survive the copy back); false when no
  // pinned memory could be had.
  bool prepare(PostedReceive& posted, void* buf, int count, MPI_Datatype datatype, bool device);
  // After MPI completed the receive successfully (status filled).
  ReceiveOutcome finish(PostedReceive& posted, MPI_Status* status);
  // The receive of a message a probe received already (status filled here).
  ReceiveOutcome finish_probed(PostedReceive& posted, const ProbedMessage& message, MPI_Status* status);
  // The data's size when `bytes` are a header of this job's; nullopt otherwise.
  std::optional<std::uint64_t> recognise(std::span<const unsigned char> bytes) const;

private:
  bool read_header(const PostedReceive& posted, RendezvousHeader* header) const;
  bool valid(const RendezvousHeader& header) const;
  ReceiveOutcome take_rendezvous(PostedReceive& posted, const RendezvousHeader& header, MPI_Status* status);
  int deliver(PostedReceive& posted, const void* source, std::size_t bytes);
  static void report_delivery(const PostedReceive& posted, std::uint64_t sent, MPI_Status* status,
                              ReceiveOutcome& outcome);

  const pmpi::RuntimeChannel& channel_;
  IpcHandleCache& cache_;
  BufferPool& pinned_;
};

} // namespace commlens::runtime
