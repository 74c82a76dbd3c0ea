#include "point_to_point/rendezvous_sender.hpp"

#include "transport/device_buffer.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <climits>

namespace commlens::runtime {

namespace {

// Blocks kept for reuse: a few large messages' worth, so steady exchanges allocate nothing.
constexpr std::size_t kCachedBlockBytes = std::size_t{2} << 30;

} // namespace

RendezvousSender::RendezvousSender(const contract::RuntimeChannel& channel, PeerDirectory& peers,
                                   IpcHandleCache& cache, BufferPool& pinned, StripeRings& rings,
                                   std::uint64_t stripe_from)
    : channel_(channel.comm), key_{channel.key[0], channel.key[1]}, node_rank_(channel.node_rank),
      slots_(channel.node_memory != nullptr ? handoff_slots(channel, channel.node_rank) : nullptr),
      peers_(peers), cache_(cache), pinned_(pinned), blocks_(PoolMemory::Device, kCachedBlockBytes),
      rings_(rings), stripe_from_(stripe_from) {
  PMPI_Comm_rank(channel_, &world_rank_);
  pid_ = static_cast<int>(getpid());
}

std::chrono::nanoseconds RendezvousSender::patience_for(std::size_t bytes) noexcept {
  // 20 us, plus the time of a device-to-device copy at about 1 TB/s.
  return std::chrono::nanoseconds(20000 + static_cast<std::int64_t>(bytes / 1000));
}

bool RendezvousSender::take_ring(std::size_t bytes) {
  if (stripe_from_ == 0 || bytes < stripe_from_ || ring_taken_.exchange(true, std::memory_order_acquire)) {
    return false;
  }
  if ((ring_lane_.is_open() || ring_lane_.open()) && rings_.ring(node_rank_)) {
    return true;
  }
  ring_taken_.store(false, std::memory_order_release);
  return false;
}

void RendezvousSender::release_ring(Outstanding& sent) {
  if (sent.holds_ring) {
    sent.holds_ring = false;
    ring_taken_.store(false, std::memory_order_release);
  }
}

bool RendezvousSender::offer(const void* buf, std::size_t bytes, int dest_world, bool waits,
                             RendezvousHeader* header, std::string* why) {
  if (slots_ == nullptr) {
    *why = "no node segment for the hand-over";
    return false;
  }
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    *why = "over 2 GiB (the host path's fallback counts bytes in an int)";
    return false;
  }
  if (dest_world == world_rank_) {
    // A receive of its own would have to wait for the send that waits for it.
    *why = "sent to itself: the host path";
    return false;
  }
  const BufferQuery query = query_buffer(buf);
  int current = -1;
  cudaGetDevice(&current);
  const auto gpu = pci_gpu_id(current);
  if (query.kind != BufferKind::Device || query.device.device != current || !gpu) {
    *why = "buffer not on the current GPU";
    return false;
  }
  if (!peers_.can_map(dest_world, *gpu)) {
    *why = "receiver cannot map this GPU's memory (another node, GPU not visible, or refused before)";
    return false;
  }
  *header = RendezvousHeader{};
  int error = 0;
  if (!cache_.export_handle(query.device.base, query.device.buffer_id, &header->buffer, &error)) {
    *why = "buffer not exportable through CUDA IPC (e.g. a stream-ordered pool allocation)";
    return false;
  }
  if (!wait_for_legacy_stream()) {
    *why = "CUDA error while waiting for the buffer's producers";
    return false;
  }
  std::lock_guard lock(mutex_);
  const std::int32_t slot = next_slot_;
  if (slots_[slot].state.load(std::memory_order_acquire) != kFree) {
    *why = "every hand-over slot busy (receivers have not copied): the host path";
    return false;
  }
  next_slot_ = (next_slot_ + 1) % kSlots;
  header->key[0] = key_[0];
  header->key[1] = key_[1];
  header->bytes = bytes;
  header->buffer.buffer_id = query.device.buffer_id;
  header->buffer.offset =
      static_cast<std::uint64_t>(static_cast<const char*>(buf) - static_cast<const char*>(query.device.base));
  header->sender_pid = pid_;
  header->sender_world_rank = world_rank_;
  header->sender_node_rank = node_rank_;
  header->slot = slot;
  Outstanding& sent = outstanding_.emplace_back(Outstanding{slot, buf, bytes, dest_world, {}});
  sent.holds_ring = waits && take_ring(bytes);
  any_outstanding_.store(true, std::memory_order_relaxed);
  slots_[slot].stripe_ring = sent.holds_ring ? 1 : 0;
  slots_[slot].state.store(waits ? kOfferedWaiting : kOffered, std::memory_order_release);
  return true;
}

RendezvousSender::Outstanding* RendezvousSender::find(std::int32_t slot) {
  for (Outstanding& sent : outstanding_) {
    if (sent.slot == slot && !sent.settled) {
      return &sent;
    }
  }
  return nullptr;
}

// Takes the message back from a receiver that has not claimed it: into a block, named in the slot.
// False when the receiver claimed it meanwhile (or no block could be had: then keep waiting).
bool RendezvousSender::withdraw(Outstanding& sent, std::uint32_t offered_state) {
  PooledBuffer block = blocks_.acquire(sent.bytes);
  if (!block) {
    return false;
  }
  HandoffSlot& slot = slots_[sent.slot];
  std::uint32_t expected = offered_state;
  if (!slot.state.compare_exchange_strong(expected, kWithdrawn, std::memory_order_acq_rel)) {
    return false;
  }
  const BufferQuery query = query_buffer(block.data());
  int error = 0;
  if (!copy_on_legacy_stream(block.data(), sent.source, sent.bytes) ||
      !cache_.export_handle(block.data(), query.device.buffer_id, &slot.block, &error)) {
    // The receiver waits for kInBlock; the host path still serves it from the user's buffer,
    // which the send has not released.
    slot.state.store(kHostRequested, std::memory_order_release);
    return false;
  }
  slot.block.buffer_id = query.device.buffer_id;
  slot.block.offset = 0;
  sent.block = std::move(block);
  sent.source = sent.block.data();
  slot.state.store(kInBlock, std::memory_order_release);
  return true;
}

// The receiver could not map the buffer or the block (only a failed cudaIpcOpenMemHandle gets
// here; offer() keeps the usual causes away), or chose not to wait for a first mapping
// (kHostOnce): the bytes go through pinned host memory.
void RendezvousSender::serve_host_request(Outstanding& sent, bool receiver_cannot_map) {
  if (sent.sent_by_host) {
    return;
  }
  sent.sent_by_host = true;
  if (receiver_cannot_map) {
    peers_.mark_unmappable(sent.dest_world);
  }
  PooledBuffer host = pinned_.acquire(sent.bytes);
  const bool copied = host && copy_on_legacy_stream(host.data(), sent.source, sent.bytes);
  // Without the data, an empty message tells the receiver to fail the receive, not to hang.
  PMPI_Send(copied ? host.data() : nullptr, copied ? static_cast<int>(sent.bytes) : 0, MPI_BYTE,
            sent.dest_world, data_tag(sent.slot), channel_);
}

std::uint64_t RendezvousSender::write_host_share(const Outstanding& sent) {
  const std::uint64_t host_from = slots_[sent.slot].host_from;
  const std::optional<StageRing> ring = rings_.ring(node_rank_); // pinned by take_ring()
  StageTransfer writer = StageTransfer::writer(
      *ring, ring_lane_, static_cast<const char*>(sent.source) + host_from, sent.bytes - host_from);
  for (int spins = 0; !writer.done(); ++spins) {
    if (!writer.step()) {
      pause_spinning(spins);
    }
  }
  return sent.bytes - host_from;
}

int RendezvousSender::settle(std::int32_t slot_index, std::chrono::nanoseconds patience,
                             std::uint64_t* host_bytes) {
  Outstanding* sent = nullptr;
  HandoffSlot& slot = slots_[slot_index];
  {
    std::lock_guard lock(mutex_);
    sent = find(slot_index);
    // A nonblocking send's wait: the sender waits from now on (and offers striping when its ring
    // is free), if the receiver has not claimed yet.
    if (sent != nullptr && patience.count() > 0 && slot.state.load(std::memory_order_acquire) == kOffered) {
      sent->holds_ring = take_ring(sent->bytes);
      slot.stripe_ring = sent->holds_ring ? 1 : 0;
      std::uint32_t expected = kOffered;
      if (!slot.state.compare_exchange_strong(expected, kOfferedWaiting, std::memory_order_acq_rel)) {
        release_ring(*sent);
      }
    }
  }
  if (sent == nullptr) {
    return MPI_SUCCESS;
  }
  const auto deadline = std::chrono::steady_clock::now() + patience;
  bool host_share_written = false;
  for (int spins = 0;; ++spins) {
    const std::uint32_t state = slot.state.load(std::memory_order_acquire);
    if (state == kCopied) {
      break; // and the receiver has read every stage: the ring is free
    }
    if (state == kClaimedStriped && !host_share_written) {
      host_share_written = true;
      const std::uint64_t written = write_host_share(*sent);
      if (host_bytes != nullptr) {
        *host_bytes = written;
      }
    } else if (state == kHostRequested || state == kHostOnce) {
      std::lock_guard lock(mutex_);
      serve_host_request(*sent, state == kHostRequested);
    } else if ((state == kOffered || state == kOfferedWaiting) &&
               std::chrono::steady_clock::now() >= deadline && withdraw(*sent, state)) {
      std::lock_guard lock(mutex_);
      release_ring(*sent);
      sent->settled = true; // the receiver copies from the block; progress() frees both later
      return MPI_SUCCESS;
    }
    pause_spinning(spins);
  }
  std::lock_guard lock(mutex_);
  release_ring(*sent);
  slot.state.store(kFree, std::memory_order_release);
  drop(sent);
  return MPI_SUCCESS;
}

void RendezvousSender::cancel(std::int32_t slot) {
  std::lock_guard lock(mutex_);
  if (Outstanding* sent = find(slot)) {
    release_ring(*sent);
    drop(sent);
  }
  slots_[slot].state.store(kFree, std::memory_order_release);
}

void RendezvousSender::drop(const Outstanding* sent) {
  std::erase_if(outstanding_, [sent](const Outstanding& entry) { return &entry == sent; });
  any_outstanding_.store(!outstanding_.empty(), std::memory_order_relaxed);
}

void RendezvousSender::progress() {
  // Called by every point-to-point call: with nothing outstanding (every host-buffer program), no
  // lock is taken.
  if (!any_outstanding_.load(std::memory_order_relaxed)) {
    return;
  }
  std::lock_guard lock(mutex_);
  std::erase_if(outstanding_, [this](Outstanding& sent) {
    HandoffSlot& slot = slots_[sent.slot];
    const std::uint32_t state = slot.state.load(std::memory_order_acquire);
    if (state == kHostRequested || state == kHostOnce) {
      serve_host_request(sent, state == kHostRequested);
    }
    if (state != kCopied || !sent.settled) {
      return false; // an unsettled entry is settle()'s to free
    }
    slot.state.store(kFree, std::memory_order_release);
    return true;
  });
  any_outstanding_.store(!outstanding_.empty(), std::memory_order_relaxed);
}

void RendezvousSender::drain() {
  std::vector<std::int32_t> unsettled;
  {
    std::lock_guard lock(mutex_);
    for (const Outstanding& sent : outstanding_) {
      if (!sent.settled) {
        unsettled.push_back(sent.slot);
      }
    }
  }
  for (const std::int32_t slot : unsettled) {
    settle(slot, std::chrono::nanoseconds(0));
  }
  for (int spins = 0;; ++spins) {
    progress();
    std::lock_guard lock(mutex_);
    if (outstanding_.empty()) {
      break;
    }
    pause_spinning(spins);
  }
  blocks_.trim();
}

} // namespace commlens::runtime
