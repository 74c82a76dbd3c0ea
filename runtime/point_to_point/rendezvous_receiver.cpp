#include "point_to_point/rendezvous_receiver.hpp"

#include "transport/device_buffer.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace commlens::runtime {

namespace {

// Decoded at most so many runs per receive (16 bytes each); a datatype with more is written back
// whole, its span read from the device first.
constexpr std::size_t kMaxWrittenBackRuns = std::size_t{1} << 20;

// The copies of a receive, as MPI return codes.
int copy(void* destination, const void* source, std::size_t bytes) {
  return copy_on_legacy_stream(destination, source, bytes) ? MPI_SUCCESS : MPI_ERR_OTHER;
}

} // namespace

RendezvousReceiver::RendezvousReceiver(const contract::RuntimeChannel& channel, IpcHandleCache& cache,
                                       BufferPool& pinned, StripeRings& rings, StripeSettings stripe,
                                       bool background_opens)
    : channel_(channel), cache_(cache), pinned_(pinned), rings_(rings), stripe_(std::move(stripe)),
      background_opens_(background_opens) {}

bool RendezvousReceiver::prepare(PostedReceive& posted, void* buf, int count, MPI_Datatype datatype,
                                 bool device) {
  posted.buf = buf;
  posted.count = count;
  posted.datatype = datatype;
  posted.layout = message_layout(count, datatype);
  posted.device = device;
  if (!device || posted.layout.span == 0) {
    posted.device = false; // nothing to stage: MPI may take the pointer as it is
    return true;
  }
  posted.image = pinned_.acquire(posted.layout.span);
  if (!posted.image) {
    return false;
  }
  if (!posted.layout.contiguous) {
    posted.runs = datatype_runs(count, datatype, kMaxWrittenBackRuns);
    if (!posted.runs) {
      return copy(posted.image.data(), static_cast<char*>(buf) + posted.layout.span_start,
                  posted.layout.span) == MPI_SUCCESS;
    }
  }
  return true;
}

int RendezvousReceiver::write_back(const PostedReceive& posted, std::size_t bytes) {
  if (posted.layout.contiguous) {
    return copy(posted.buf, posted.image.data(), bytes);
  }
  char* const span = static_cast<char*>(posted.buf) + posted.layout.span_start;
  if (!posted.runs) {
    return copy(span, posted.image.data(), posted.layout.span);
  }
  // The runs' offsets are from the buffer; the image holds the span.
  return copy_runs_on_legacy_stream(static_cast<char*>(posted.buf), static_cast<char*>(posted.location()),
                                    first_bytes(*posted.runs, bytes))
             ? MPI_SUCCESS
             : MPI_ERR_OTHER;
}

// The first bytes of the message as sent: where MPI put them, packed again when the receive's
// datatype scattered them.
bool RendezvousReceiver::read_header(const PostedReceive& posted, RendezvousHeader* header) const {
  if (posted.layout.contiguous) {
    std::memcpy(header, posted.location(), sizeof *header);
  } else {
    int type_size = 0;
    PMPI_Type_size(posted.datatype, &type_size);
    if (type_size <= 0) {
      return false;
    }
    const int elements =
        std::min(posted.count, static_cast<int>((sizeof *header + type_size - 1) / type_size));
    std::vector<unsigned char> packed(static_cast<std::size_t>(elements) *
                                      static_cast<std::size_t>(type_size));
    int position = 0;
    PMPI_Pack(posted.location(), elements, posted.datatype, packed.data(), static_cast<int>(packed.size()),
              &position, MPI_COMM_SELF);
    if (packed.size() < sizeof *header) {
      return false;
    }
    std::memcpy(header, packed.data(), sizeof *header);
  }
  return valid(*header);
}

// This job's key, and a slot that exists.
bool RendezvousReceiver::valid(const RendezvousHeader& header) const {
  return header.key[0] == channel_.key[0] && header.key[1] == channel_.key[1] &&
         channel_.node_memory != nullptr && header.sender_node_rank >= 0 &&
         static_cast<std::size_t>(header.sender_node_rank) < channel_.node_world_ranks.size() &&
         header.slot >= 0 && header.slot < kSlots;
}

std::optional<std::uint64_t> RendezvousReceiver::recognise(std::span<const unsigned char> bytes) const {
  RendezvousHeader header;
  if (bytes.size() != sizeof header) {
    return std::nullopt;
  }
  std::memcpy(&header, bytes.data(), sizeof header);
  return valid(header) ? std::optional<std::uint64_t>(header.bytes) : std::nullopt;
}

// The data, wherever it is (a peer's block through IPC, or pinned host memory), into the user's
// buffer: directly when contiguous, else unpacked into the host buffer or the image.
int RendezvousReceiver::deliver(PostedReceive& posted, const void* source, std::size_t bytes) {
  if (posted.layout.contiguous) {
    return copy(posted.buf, source, bytes);
  }
  PooledBuffer packed = pinned_.acquire(bytes);
  if (!packed || copy(packed.data(), source, bytes) != MPI_SUCCESS) {
    return MPI_ERR_NO_MEM;
  }
  int type_size = 1;
  PMPI_Type_size(posted.datatype, &type_size);
  int position = 0;
  PMPI_Unpack(packed.data(), static_cast<int>(bytes), &position, posted.location(),
              static_cast<int>(bytes / static_cast<std::size_t>(type_size)), posted.datatype, MPI_COMM_SELF);
  return posted.device ? write_back(posted, bytes) : MPI_SUCCESS;
}

// A message of `sent` bytes into the receive: the bytes that fit were delivered (outcome.rc says
// how that went), the status counts them, and a message too large for the buffer is
// MPI_ERR_TRUNCATE.
void RendezvousReceiver::report_delivery(const PostedReceive& posted, std::uint64_t sent, MPI_Status* status,
                                         ReceiveOutcome& outcome) {
  outcome.bytes = std::min<std::uint64_t>(sent, posted.layout.bytes);
  PMPI_Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(outcome.bytes));
  if (outcome.rc == MPI_SUCCESS && sent > posted.layout.bytes) {
    outcome.rc = MPI_ERR_TRUNCATE;
  }
  status->MPI_ERROR = outcome.rc;
}

std::uint64_t RendezvousReceiver::striped_share(const PostedReceive& posted, const RendezvousHeader& header,
                                                const void* source, std::unique_lock<std::mutex>* lanes) {
  // Straight into the receive buffer only: contiguous, on a GPU, and the whole message fits.
  if (!posted.device || !posted.layout.contiguous || header.bytes > posted.layout.bytes) {
    return 0;
  }
  cudaPointerAttributes from{};
  cudaPointerAttributes to{};
  if (cudaPointerGetAttributes(&from, source) != cudaSuccess ||
      cudaPointerGetAttributes(&to, posted.buf) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  const std::uint64_t host_bytes =
      tuning::p2p_host_bytes(stripe_.table, stripe_.forced_percent, header.bytes, from.device == to.device);
  *lanes = std::unique_lock(lanes_mutex_, std::try_to_lock);
  if (host_bytes == 0 || !lanes->owns_lock() || !(ring_lane_.is_open() || ring_lane_.open()) ||
      !(peer_lane_.is_open() || peer_lane_.open()) || !rings_.ring(header.sender_node_rank)) {
    return 0;
  }
  return host_bytes;
}

int RendezvousReceiver::copy_striped(const PostedReceive& posted, const RendezvousHeader& header,
                                     const void* source, std::uint64_t host_from, ReceiveOutcome& outcome) {
  char* const destination = static_cast<char*>(posted.buf);
  // The program's work on the legacy stream may still use the buffer; the lanes do not wait for it.
  const bool ready = wait_for_legacy_stream();
  const auto peer_stream = static_cast<cudaStream_t>(peer_lane_.stream());
  const bool peer_issued =
      ready && cudaMemcpyAsync(destination, source, host_from, cudaMemcpyDefault, peer_stream) == cudaSuccess;
  // Read every chunk even after an error: the sender waits until its ring is empty.
  StageTransfer reader =
      StageTransfer::reader(*rings_.ring(header.sender_node_rank), ring_lane_,
                            peer_issued ? destination + host_from : nullptr, header.bytes - host_from);
  for (int spins = 0; !reader.done(); ++spins) {
    if (!reader.step()) {
      pause_spinning(spins);
    }
  }
  const bool peer_copied = peer_issued && cudaStreamSynchronize(peer_stream) == cudaSuccess;
  outcome.striped = true;
  outcome.bytes_host = header.bytes - host_from;
  outcome.chunks = 1 + reader.chunks();
  outcome.streams = 2;
  if (!peer_copied || reader.cuda_error() != 0) {
    cudaGetLastError();
    return MPI_ERR_OTHER;
  }
  return MPI_SUCCESS;
}

bool RendezvousReceiver::first_use_through_host(int owner_pid, const PublishedBuffer& buffer,
                                                std::uint64_t bytes) const {
  using Readiness = IpcHandleCache::Readiness;
  if (!background_opens_) {
    return false;
  }
  // The host path's estimate: 25 us plus 0.16 ns per byte, as measured with two ranks on the H100
  // machine from 2 to 8 MiB (docs/performance.md). A refused open is map()'s to retry.
  const std::uint64_t host_path_ns = 25'000 + bytes * 16 / 100;
  const Readiness readiness = cache_.readiness(owner_pid, buffer);
  return (readiness == Readiness::Unmapped || readiness == Readiness::Opening) &&
         cache_.opening_costs_more(1, host_path_ns);
}

// Claims the message (zero-copy from the sender's buffer, striped when the sender offers it and
// the settings give the host path a share) or, once the sender withdrew it, copies it from the
// sender's block; through the host when neither can be mapped.
ReceiveOutcome RendezvousReceiver::take_rendezvous(PostedReceive& posted, const RendezvousHeader& header,
                                                   MPI_Status* status) {
  ReceiveOutcome outcome;
  outcome.rendezvous = true;
  const std::size_t bytes = std::min<std::size_t>(header.bytes, posted.layout.bytes);
  HandoffSlot& slot = handoff_slots(channel_, header.sender_node_rank)[header.slot];
  bool opened = false;
  int error = 0;
  const std::uint64_t epoch = cache_.call_epoch();
  std::uint32_t state = slot.state.load(std::memory_order_acquire);
  // A first use through the host needs the sender's copy now: only a waiting sender serves it at
  // once (kOfferedWaiting never goes back to kOffered). The message is claimed before the open is
  // queued: woken on this rank's core (MPI binds a rank to one), the worker ran its open first,
  // and the claim came after the sender's 20 us of patience (34 to 150 us later on the H100
  // machine), so the sender had withdrawn the message.
  bool deferred = false;
  if (state == kOfferedWaiting && first_use_through_host(header.sender_pid, header.buffer, header.bytes)) {
    deferred = slot.state.compare_exchange_strong(state, kHostOnce, std::memory_order_acq_rel);
    if (deferred) {
      state = kHostOnce;
      int device = 0;
      cudaGetDevice(&device);
      cache_.open_later(header.sender_pid, header.buffer, device);
    }
  }
  // Mapped before claiming: a first mapping takes milliseconds, which the sender need not wait;
  // not at all once the sender has withdrawn the message or it goes through the host.
  const bool offered = state == kOffered || state == kOfferedWaiting;
  const void* source =
      offered ? cache_.map(header.sender_pid, header.buffer, epoch, &opened, &error) : nullptr;
  outcome.ipc_opens += opened ? 1 : 0;
  std::unique_lock<std::mutex> lanes;
  state = slot.state.load(std::memory_order_acquire);
  const std::uint64_t host_bytes = source != nullptr && state == kOfferedWaiting && slot.stripe_ring != 0
                                       ? striped_share(posted, header, source, &lanes)
                                       : 0;
  // Claimed (striped only while the sender waits), or asked for the host path when unmappable;
  // the sender may move from kOffered to kOfferedWaiting meanwhile, or withdraw.
  while (state == kOffered || state == kOfferedWaiting) {
    const std::uint32_t claim = source == nullptr                            ? kHostRequested
                                : state == kOfferedWaiting && host_bytes > 0 ? kClaimedStriped
                                                                             : kClaimed;
    if (claim == kClaimedStriped) {
      slot.host_from = header.bytes - host_bytes; // published by the exchange
    }
    if (slot.state.compare_exchange_weak(state, claim, std::memory_order_acq_rel)) {
      state = claim;
    }
  }
  if (state != kClaimed && state != kClaimedStriped) {
    source = nullptr;
    for (int spins = 0; state != kHostRequested && state != kHostOnce; ++spins) {
      if (state == kInBlock) {
        source = cache_.map(header.sender_pid, slot.block, epoch, &opened, &error);
        outcome.ipc_opens += opened ? 1 : 0;
        if (source != nullptr ||
            slot.state.compare_exchange_strong(state, kHostRequested, std::memory_order_acq_rel)) {
          break;
        }
      }
      pause_spinning(spins); // the sender is copying into the block
      state = slot.state.load(std::memory_order_acquire);
    }
  }
  PooledBuffer through_host;
  if (source == nullptr) {
    outcome.reason = deferred ? kFirstUseReason : "";
    through_host = pinned_.acquire(header.bytes);
    MPI_Status data_status;
    PMPI_Recv(through_host ? through_host.data() : nullptr, through_host ? static_cast<int>(header.bytes) : 0,
              MPI_BYTE, header.sender_world_rank, data_tag(header.slot), channel_.comm, &data_status);
    int arrived = 0;
    PMPI_Get_count(&data_status, MPI_BYTE, &arrived);
    outcome.bytes_host = static_cast<std::uint64_t>(arrived);
    source = through_host.data();
    if (!through_host || static_cast<std::size_t>(arrived) != header.bytes) {
      outcome.rc = MPI_ERR_NO_MEM;
    }
  }
  if (state == kClaimedStriped) {
    outcome.rc = copy_striped(posted, header, source, header.bytes - host_bytes, outcome);
  } else if (outcome.rc == MPI_SUCCESS) {
    outcome.rc = deliver(posted, source, bytes);
  }
  slot.state.store(kCopied, std::memory_order_release);
  report_delivery(posted, header.bytes, status, outcome);
  return outcome;
}

ReceiveOutcome RendezvousReceiver::finish_probed(PostedReceive& posted, const ProbedMessage& message,
                                                 MPI_Status* status) {
  message.report(status);
  if (message.rendezvous) {
    RendezvousHeader header;
    std::memcpy(&header, message.contents.data(), sizeof header);
    return take_rendezvous(posted, header, status);
  }
  ReceiveOutcome outcome;
  const std::uint64_t fits = std::min<std::uint64_t>(message.bytes, posted.layout.bytes);
  outcome.bytes_host = posted.device ? fits : 0;
  if (fits > 0) {
    outcome.rc = deliver(posted, message.contents.data(), fits);
  }
  report_delivery(posted, message.bytes, status, outcome);
  return outcome;
}

ReceiveOutcome RendezvousReceiver::finish(PostedReceive& posted, MPI_Status* status) {
  int received = 0;
  PMPI_Get_count(status, MPI_BYTE, &received);
  RendezvousHeader header;
  if (received == static_cast<int>(sizeof header) && posted.layout.bytes >= sizeof header &&
      read_header(posted, &header)) {
    return take_rendezvous(posted, header, status);
  }
  ReceiveOutcome outcome;
  outcome.bytes = static_cast<std::uint64_t>(std::max(received, 0));
  if (posted.device && received > 0) {
    outcome.bytes_host = outcome.bytes;
    outcome.rc = write_back(posted, outcome.bytes);
  }
  return outcome;
}

} // namespace commlens::runtime
