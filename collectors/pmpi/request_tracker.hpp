#pragma once
// Nonblocking and persistent requests from post to completion, keyed by the MPI_Request value.
// The posting call stores what the completion record needs (post time, peer, bytes, communicator);
// whichever wait/test call sees the request complete takes it out again. Persistent requests stay
// until MPI_Request_free and are only switched between active and inactive by Start and completion.
#include "commlens/profiler/event_record.hpp"
#include "handle_map.hpp"

#include <cstdint>

namespace commlens::pmpi {

struct CommunicatorEntry;

struct TrackedRequest {
  std::uint64_t request_id = 0; // call id of the posting call (or of the MPI_Start that activated it)
  std::uint64_t post_ticks = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_recv = 0;
  const CommunicatorEntry* communicator = nullptr;
  std::int32_t peer = kNoPeer; // kPeerAnySource until the completing status names the source
  std::int32_t tag_or_root = kNoTagOrRoot;
  FunctionId function = 0;
  BufferLocation location = BufferLocation::Unknown;
  bool persistent = false;
  bool active = false; // persistent requests are inactive between completion and the next Start
};

using RequestTracker = contract::HandleMap<TrackedRequest>;

// The process's tracker, created at MPI_Init before any request can be posted.
RequestTracker& request_tracker() noexcept;
void start_request_tracker();

// MPI_Request_free: the request will never be seen completing.
void forget_request(std::uint64_t key) noexcept;

} // namespace commlens::pmpi
