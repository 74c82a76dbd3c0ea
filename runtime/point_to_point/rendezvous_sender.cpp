#include "rendezvous_sender.hpp"

#include "device_buffer.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

namespace commlens::runtime {

namespace {
// Blocks kept for reuse: a few large messages' worth, so steady exchanges allocate nothing.
constexpr std::size_t kCachedBlockBytes = std::size_t{2} << 30;
} // namespace

RendezvousSender::RendezvousSender(const pmpi::RuntimeChannel& channel, PeerDirectory& peers,
                                   IpcHandleCache& cache, BufferPool& pinned)
    : channel_(channel.comm), key_{channel.key[0], channel.key[1]}, peers_(peers), cache_(cache),
      pinned_(pinned), blocks_(PoolMemory::Device, kCachedBlockBytes) {
  PMPI_Comm_rank(channel_, &world_rank_);
  pid_ = static_cast<int>(getpid());
}

RendezvousSender::~RendezvousSender() = default;

const RendezvousHeader* RendezvousSender::offer(const void* buf, std::size_t bytes, int dest_world,
                                                std::string* why) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    *why = "over 2 GiB (the host path's fallback counts bytes in an int)";
    return nullptr;
  }
  const BufferQuery query = query_buffer(buf);
  int current = -1;
  cudaGetDevice(&current);
  const auto gpu = pci_gpu_id(current);
  if (query.kind != BufferKind::Device || query.device.device != current || !gpu) {
    *why = "buffer not on the current GPU";
    return nullptr;
  }
  if (dest_world == world_rank_) {
    // The receive may run while this process is the only one that could serve the block.
    *why = "sent to itself: the host path";
    return nullptr;
  }
  if (!peers_.can_map(dest_world, *gpu)) {
    *why = "receiver cannot map this GPU's memory (another node, GPU not visible, or refused before)";
    return nullptr;
  }
  auto sent = std::make_unique<Outstanding>();
  sent->block = blocks_.acquire(bytes);
  if (!sent->block) {
    *why = "no device memory for the send copy";
    return nullptr;
  }
  const BufferQuery block = query_buffer(sent->block.data());
  int error = 0;
  if (!cache_.export_handle(sent->block.data(), block.device.buffer_id, &sent->header.block, &error)) {
    *why = "send copy not exportable through CUDA IPC";
    return nullptr;
  }
  // On the legacy default stream: after the buffer's producers there (and on the streams that
  // synchronise with it), as any CUDA-aware MPI reads a send buffer.
  if (cudaMemcpyAsync(sent->block.data(), buf, bytes, cudaMemcpyDeviceToDevice, cudaStreamLegacy) !=
          cudaSuccess ||
      cudaStreamSynchronize(cudaStreamLegacy) != cudaSuccess) {
    cudaGetLastError();
    *why = "CUDA error copying the message";
    return nullptr;
  }
  RendezvousHeader& header = sent->header;
  header.key[0] = key_[0];
  header.key[1] = key_[1];
  header.bytes = bytes;
  header.block.buffer_id = block.device.buffer_id;
  header.block.offset = 0;
  header.sender_pid = pid_;
  header.sender_world_rank = world_rank_;
  header.sequence = static_cast<std::int32_t>(next_sequence_.fetch_add(1) % kSequences);
  sent->dest_world = dest_world;
  PMPI_Irecv(&sent->reply, 1, MPI_INT32_T, dest_world, reply_tag(header.sequence), channel_,
             &sent->reply_request);
  std::lock_guard lock(mutex_);
  outstanding_.push_back(std::move(sent));
  return &outstanding_.back()->header;
}

// The receiver could not map the block (only a failed cudaIpcOpenMemHandle gets here; the checks
// in offer() keep the usual causes away): the bytes go through pinned host memory on the channel.
void RendezvousSender::complete(Outstanding& sent) {
  if (sent.reply != kSendThroughHost) {
    return;
  }
  peers_.mark_unmappable(sent.dest_world);
  const std::size_t bytes = sent.header.bytes;
  PooledBuffer host = pinned_.acquire(bytes);
  if (host) {
    cudaMemcpy(host.data(), sent.block.data(), bytes, cudaMemcpyDeviceToHost);
  }
  // Without pinned memory, an empty message tells the receiver to fail the receive, not to hang.
  PMPI_Send(host ? host.data() : nullptr, host ? static_cast<int>(bytes) : 0, MPI_BYTE, sent.dest_world,
            data_tag(sent.header.sequence), channel_);
}

void RendezvousSender::progress() {
  std::lock_guard lock(mutex_);
  std::erase_if(outstanding_, [this](const std::unique_ptr<Outstanding>& sent) {
    int arrived = 0;
    PMPI_Test(&sent->reply_request, &arrived, MPI_STATUS_IGNORE);
    if (arrived != 0) {
      complete(*sent);
    }
    return arrived != 0;
  });
}

void RendezvousSender::drain() {
  std::lock_guard lock(mutex_);
  for (const auto& sent : outstanding_) {
    PMPI_Wait(&sent->reply_request, MPI_STATUS_IGNORE);
    complete(*sent);
  }
  outstanding_.clear();
  blocks_.trim();
}

} // namespace commlens::runtime
