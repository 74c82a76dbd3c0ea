#pragma once
// The receiving side of device-buffer point-to-point: where a receive is posted (a device buffer
// receives into a pinned image of its span), and what completing it takes: a rendezvous header
// (rendezvous_protocol.hpp) is replaced by the sender's data, copied over CUDA IPC from the sender's
// buffer or block, and the status corrected to the data's size; anything else is a plain message, copied to
// the device if staged. Every receive of a process whose peers may send rendezvous goes through here, host
// buffers too: a header can match any receive.
#include "datatypes/datatype_runs.hpp"
#include "datatypes/message_layout.hpp"
#include "point_to_point/probed_messages.hpp"
#include "point_to_point/rendezvous_protocol.hpp"
#include "point_to_point/stripe_rings.hpp"
#include "runtime_channel.hpp"
#include "transport/buffer_pool.hpp"
#include "transport/ipc_handle_cache.hpp"
#include "tuning_table.hpp"

#include <mutex>

namespace commlens::runtime {

struct PostedReceive {
  void* buf = nullptr;
  int count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  MessageLayout layout;
  bool device = false;
  PooledBuffer image; // device buffers: their span in pinned host memory
  // A non-contiguous device buffer: the bytes its elements take, written back to the device from
  // the image (nullopt: not decoded, the image holds the whole span as it was, written back whole).
  std::optional<std::vector<ByteRun>> runs;

  // The buffer MPI receives into (with count and datatype as the user gave them).
  void* location() const noexcept {
    return device ? static_cast<char*>(image.data()) - layout.span_start : buf;
  }
};

struct ReceiveOutcome {
  int rc = MPI_SUCCESS;
  bool rendezvous = false;
  bool striped = false; // the peer copy and the host path together
  std::uint32_t ipc_opens = 0;
  std::uint32_t chunks = 1;
  std::uint32_t streams = 1;
  std::uint64_t bytes = 0;      // received
  std::uint64_t bytes_host = 0; // through host memory
  const char* reason = "";      // why a rendezvous went through the host, when it was a choice
};

// How much of a rendezvous message goes over the host path (tuning::p2p_host_bytes).
struct StripeSettings {
  tuning::PointToPointStripe table;
  std::optional<std::uint32_t> forced_percent; // COMMLENS_RUNTIME_HOST_PERCENT
};

class RendezvousReceiver {
public:
  // background_opens: COMMLENS_RUNTIME_BACKGROUND_OPENS (first_use_through_host below).
  RendezvousReceiver(const contract::RuntimeChannel& channel, IpcHandleCache& cache, BufferPool& pinned,
                     StripeRings& rings, StripeSettings stripe, bool background_opens);

  // Sets up a receive into buf. A device buffer gets its image; only its elements are written
  // back, so what the program writes between them meanwhile stays (a datatype that cannot be
  // decoded has its span filled from the device now and written back whole); false when no pinned
  // memory could be had.
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
  // the Dynamic copy-type selection of "Design considerations for GPU-aware collective communications in MPI"
  // (Faraji and Afsahi), with COMMLENS_RUNTIME_BACKGROUND_OPENS on: whether a buffer not mapped yet, whose
  // opening would take longer than the host path takes for `bytes`, should go through the host this time
  // while the cache's worker opens its handle for the messages after it.
  bool first_use_through_host(int owner_pid, const PublishedBuffer& buffer, std::uint64_t bytes) const;
  // The bytes of the message to take over the host path when the sender offers striping, with
  // the sender's ring and this rank's lanes ready (*lanes locked); 0: a plain peer copy.
  std::uint64_t striped_share(const PostedReceive& posted, const RendezvousHeader& header, const void* source,
                              std::unique_lock<std::mutex>* lanes);
  // Bytes [0, host_from) as a peer copy from source while [host_from, bytes) arrive through the
  // sender's ring, both straight into the (contiguous, device) receive buffer.
  int copy_striped(const PostedReceive& posted, const RendezvousHeader& header, const void* source,
                   std::uint64_t host_from, ReceiveOutcome& outcome);
  int deliver(PostedReceive& posted, const void* source, std::size_t bytes);
  // A device receive's first `bytes` (as packed) from its image to the device.
  static int write_back(const PostedReceive& posted, std::size_t bytes);
  static void report_delivery(const PostedReceive& posted, std::uint64_t sent, MPI_Status* status,
                              ReceiveOutcome& outcome);

  const contract::RuntimeChannel& channel_;
  IpcHandleCache& cache_;
  BufferPool& pinned_;
  StripeRings& rings_;
  StripeSettings stripe_;
  bool background_opens_;
  std::mutex lanes_mutex_; // one striped receive at a time uses the lanes
  CopyLane ring_lane_;     // the sender's ring -> the receive buffer
  CopyLane peer_lane_;     // the peer copy beside it
};

} // namespace commlens::runtime
