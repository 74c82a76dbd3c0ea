// The first stage of the collectives over CUDA IPC (agreement.hpp): publish, agree, map the peers'
// buffers.
#include "collectives/agreement.hpp"

#include "selection_thresholds.hpp"
#include "transport/buffer_decline.hpp"
#include "transport/call_phases.hpp"
#include "transport/device_buffer.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <span>
#include <string>

namespace commlens::runtime::ipc {

namespace {

Decline publish(IpcHandleCache& cache, const void* pointer, std::size_t alignment, PublishedBuffer* published,
                int* device) {
  void* base = nullptr;
  std::uint64_t buffer_id = 0;
  if (const Decline decline = device_buffer_decline(pointer, alignment, device, &base, &buffer_id);
      decline != Decline::None) {
    return decline;
  }
  published->offset =
      static_cast<std::uint64_t>(static_cast<const char*>(pointer) - static_cast<const char*>(base));
  int error = 0;
  return cache.export_handle(base, buffer_id, published, &error) ? Decline::None : Decline::NotExportable;
}

// Waits for the request's ready event, or for the legacy default stream; false on a CUDA error
// (cleared).
bool producers_done(const BufferAgreement& request) {
  if (request.ready_event == nullptr) {
    return wait_for_legacy_stream();
  }
  if (cudaEventSynchronize(static_cast<cudaEvent_t>(request.ready_event)) == cudaSuccess) {
    return true;
  }
  cudaGetLastError();
  return false;
}

Decline prepare_local(IpcHandleCache& cache, const BufferAgreement& request, RankSlot& mine) {
  const PhaseTimer publishing(this_thread_phases.publish_ns);
  int device = -1;
  Decline decline = request.arguments_declined ? Decline::Arguments : Decline::None;
  if (decline == Decline::None && request.input != nullptr) {
    decline = publish(cache, request.input, request.alignment, &mine.input, &device);
  }
  if (decline == Decline::None && request.output != nullptr) {
    decline = publish(cache, request.output, request.alignment, &mine.output, &device);
  }
  cache.publish_freed_exports(&mine.freed);
  // The buffers' producers may still run on the legacy default stream (or streams synchronising
  // with it): peers read this memory directly, so wait for them first (for a nonblocking call,
  // for what was queued there before its call).
  if (decline == Decline::None && !producers_done(request)) {
    decline = Decline::StreamError;
  }
  return decline;
}

// What a first use of peer buffers would cost, against the host path (selection_thresholds.hpp).
bool host_path_is_faster(std::size_t unmapped, std::uint64_t bytes, const IpcHandleCache& cache) {
  return cache.opening_costs_more(unmapped, tuning::kHostPathFixedNs + tuning::kHostPathNsPerByte * bytes);
}

std::string first_decline(CommunicatorEngine& engine) {
  for (int rank = 0; rank < engine.size(); ++rank) {
    const RankSlot& slot = engine.segment().slot(rank);
    if (slot.device_ok == 0) {
      return "rank " + std::to_string(rank) + ": " + decline_text(static_cast<Decline>(slot.decline));
    }
  }
  return {};
}

// The peers' buffers this rank needs for the algorithm, mapped (cached), or, when some are not
// mapped yet and the host path is faster than opening them, queued for the worker (kMapDeferred).
MapState map_peer_buffers(CommunicatorEngine& engine, IpcHandleCache& cache, const BufferAgreement& request,
                          PeerBuffers& buffers, std::uint32_t* ipc_opens) {
  const PhaseTimer mapping(this_thread_phases.map_ns);
  const int me = engine.rank();
  buffers.inputs[me] = const_cast<void*>(request.input);
  buffers.outputs[me] = request.output;
  struct Needed {
    void** local;
    const PublishedBuffer* buffer;
    std::int32_t pid;
  };
  std::array<Needed, 2 * kMaxRanks> needs{}; // every call runs this: no allocation
  std::size_t count = 0;
  for (int peer = 0; peer < engine.size(); ++peer) {
    const RankSlot& slot = engine.segment().slot(peer);
    if (peer != me && (request.inputs_needed >> peer & 1U) != 0) {
      needs[count++] = {&buffers.inputs[peer], &slot.input, slot.pid};
    }
    if (peer != me && (request.outputs_needed >> peer & 1U) != 0) {
      needs[count++] = {&buffers.outputs[peer], &slot.output, slot.pid};
    }
  }
  const std::span<const Needed> needed(needs.data(), count);
  if (request.background_opens) {
    using Readiness = IpcHandleCache::Readiness;
    std::size_t unmapped = 0;
    bool refused = false; // the worker could not open one: this call opens it (and may retry)
    for (const Needed& need : needed) {
      const Readiness readiness = cache.readiness(need.pid, *need.buffer);
      unmapped += readiness != Readiness::Mapped ? 1 : 0;
      refused = refused || readiness == Readiness::RefusedInBackground;
    }
    if (unmapped > 0 && !refused && host_path_is_faster(unmapped, request.bytes, cache)) {
      int device = 0;
      cudaGetDevice(&device);
      for (const Needed& need : needed) {
        cache.open_later(need.pid, *need.buffer, device);
      }
      return kMapDeferred;
    }
  }
  const std::uint64_t epoch = cache.call_epoch();
  for (const Needed& need : needed) {
    int error = 0;
    bool opened = false;
    *need.local = cache.map(need.pid, *need.buffer, epoch, &opened, &error);
    *ipc_opens += opened ? 1 : 0;
    if (*need.local == nullptr) {
      return kMapFailed;
    }
  }
  return kMapped;
}

// One of the agreement's barriers, its wait counted apart from the algorithm's (call_phases.hpp).
void agreement_barrier(CommunicatorEngine& engine) {
  const PhaseTimer waiting(this_thread_phases.agree_ns);
  engine.segment().barrier(engine.next_barrier());
}

} // namespace

bool agree_and_map(CommunicatorEngine& engine, IpcHandleCache& cache, const BufferAgreement& request,
                   PeerBuffers& buffers, std::string* reason, std::uint32_t* ipc_opens) {
  const int me = engine.rank();
  NodeSegment& segment = engine.segment();
  RankSlot& mine = segment.slot(me);
  const Decline decline = prepare_local(cache, request, mine);
  mine.pid = static_cast<std::int32_t>(getpid());
  mine.device_ok = decline == Decline::None ? 1 : 0;
  mine.decline = static_cast<std::int32_t>(decline);
  agreement_barrier(engine);
  for (int peer = 0; peer < engine.size(); ++peer) {
    if (peer != me) {
      cache.close_freed(segment.slot(peer).pid, segment.slot(peer).freed);
    }
  }
  *reason = first_decline(engine);
  bool ok = reason->empty();
  if (ok) {
    mine.mapped_ok = map_peer_buffers(engine, cache, request, buffers, ipc_opens);
    agreement_barrier(engine);
    for (int peer = 0; peer < engine.size() && ok; ++peer) {
      if (segment.slot(peer).mapped_ok == kMapFailed) {
        *reason = "rank " + std::to_string(peer) + ": cudaIpcOpenMemHandle failed";
        ok = false;
      }
    }
    for (int peer = 0; peer < engine.size() && ok; ++peer) {
      if (segment.slot(peer).mapped_ok == kMapDeferred) {
        *reason = kFirstUseReason;
        ok = false;
      }
    }
  }
  if (request.vote != MPI_COMM_NULL) {
    int here = ok ? 1 : 0, everywhere = 0;
    PMPI_Allreduce(&here, &everywhere, 1, MPI_INT, MPI_MIN, request.vote);
    if (everywhere == 0 && ok) {
      *reason = "a rank on another node cannot take the call";
      ok = false;
    }
  }
  if (!ok) {
    agreement_barrier(engine); // slots stay readable until everyone has looked
  }
  return ok;
}

} // namespace commlens::runtime::ipc
