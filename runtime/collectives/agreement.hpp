#pragma once
// The agreement every collective over CUDA IPC starts with (agreement.cpp): each rank publishes the
// buffers it holds in the call, or why it cannot take the runtime path; all agree; each maps the
// peers' buffers it needs (cached), and all agree again, so a failed open on any rank sends the
// whole call to the baseline instead of leaving peers waiting. The allreduce (ipc_stages.hpp) and
// the data-movement collectives (collectives/data_movement/) share it.
#include "device/device_kernels.hpp"
#include "engine/communicator_engine.hpp"
#include "mpi_header.hpp"
#include "transport/ipc_handle_cache.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace commlens::runtime::ipc {

// Every rank's buffers as this rank sees them: its own, and the peers' it mapped (null otherwise).
struct PeerBuffers {
  void* inputs[kMaxRanks] = {};
  void* outputs[kMaxRanks] = {};
};

// What one rank brings to the agreement.
struct BufferAgreement {
  const void* input = nullptr;      // null: the call has no input on this rank (MPI ignores it here)
  void* output = nullptr;           // null: no output on this rank
  std::size_t alignment = 1;        // bytes the kernels load at once from these buffers
  std::uint64_t bytes = 0;          // the call's bytes, for the host path's cost against first opens
  std::uint32_t inputs_needed = 0;  // bit p: this rank maps rank p's input
  std::uint32_t outputs_needed = 0; // bit p: this rank maps rank p's output
  bool arguments_declined = false;  // this rank's own arguments rule the runtime out (see decline text)
  bool background_opens = false;    // COMMLENS_RUNTIME_BACKGROUND_OPENS (ipc_allreduce.hpp)
  MPI_Comm vote = MPI_COMM_NULL;    // with ranks on other nodes: every rank of it votes too
  void* ready_event = nullptr;      // the producers are done with it (else: the legacy stream now)
};

// Returns whether the call runs here, with the peers' buffers in `buffers` and the handles opened
// counted in *ipc_opens; on false the barriers are done and *reason says why. Every rank of the
// node takes the same branches, so the barrier numbers agree.
bool agree_and_map(CommunicatorEngine& engine, IpcHandleCache& cache, const BufferAgreement& request,
                   PeerBuffers& buffers, std::string* reason, std::uint32_t* ipc_opens);

} // namespace commlens::runtime::ipc
