#pragma once
// The runtime's nonblocking collectives (MPI_Iallreduce ...) between their call and the wait or
// test that completes them (docs/runtime.md, "Nonblocking collectives"). The MPI library is not
// thread-multiple, so the work is split by thread:
// - the calling thread decides, posts the call's job on its communicator's lane
//   (nonblocking/ordered_lanes.hpp) and returns a generalized request; it alone calls MPI;
// - the lane's worker runs the job (the agreement through node shared memory and the kernels, as
//   the blocking collective does), never MPI, with an IPC cache of the lane's own, so that no other
//   thread's call closes a mapping its kernels read;
// - a job whose ranks decline the runtime's algorithms in its agreement runs the call through node
//   shared memory on the lane (plugin/nonblocking_fallback.hpp), so that no rank's call waits for
//   its calling thread (MPI's progress rule);
// - every wait and test call first calls progress() (runtime_dispatch.hpp), which completes the
//   generalized requests of jobs that ran, and for a job that still declined (no fallback could
//   take it), posts the host-staged baseline on a duplicate of the communicator private to the
//   runtime (in the lane's order on every rank, request_states.hpp) and completes the request
//   when MPI finished it.
// A call declined from arguments equal on every rank runs the baseline at once on the program's
// communicator, its outputs copied back by the wait/test that completes it (finish_request).
#include "engine/runtime_records.hpp"
#include "engine/stream_set.hpp"
#include "nonblocking/ordered_lanes.hpp"
#include "nonblocking/request_states.hpp"
#include "transport/buffer_pool.hpp"
#include "transport/ipc_handle_cache.hpp"
#include "transport/shared_memory_collectives.hpp"
#include "transport/staged_images.hpp"

#include "collector_hooks.hpp"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace commlens::runtime {

class NonblockingCollectives {
public:
  // What a job runs with: the lane's IPC cache, its non-blocking stream, an event recorded on
  // the legacy default stream at the call (null if none could be): the inputs' producers are done
  // once it is, whatever the program queued there since; and the communicator's stages in node
  // shared memory, through which the job runs the call when the ranks decline the runtime's
  // algorithms in it (plugin/nonblocking_fallback.hpp).
  struct Lane {
    IpcHandleCache& cache;
    void* stream;
    void* ready_event;
    const SharedStages& stages;
    StreamSet& more_streams; // non-blocking streams beside `stream` for a tree's segments
  };
  // Runs on the lane (no MPI): the collective, filling the row's implementation, algorithm and
  // figures; declined: every rank of the communicator agreed to the baseline posted through MPI
  // by the calling thread (the jobs built here decline only where the shared-memory fallback
  // cannot take the call either).
  using Job = std::function<nonblocking::Outcome(const Lane& lane, RuntimeOp& record)>;
  // Posts the host-staged baseline on `comm` (the calling thread): staged buffers in `images`.
  using Baseline = std::function<int(MPI_Comm comm, StagedImages& images, MPI_Request* request)>;

  NonblockingCollectives(const contract::CudaPluginHost& host, RuntimeRecords& records, bool cuda_aware)
      : host_(host), records_(records), cuda_aware_(cuda_aware) {}

  // A call the runtime takes: `job` queued behind the communicator's earlier ones, *request a
  // generalized request. Its private duplicate and shared-memory stages are made here on the
  // communicator's first call (collective, as the engine's bootstrap is); where the stages could
  // not be mapped (on every rank alike), the call is the baseline at once.
  int post(MPI_Comm comm, int device, RuntimeOp record, Job job, Baseline baseline, MPI_Request* request);
  // A call declined from arguments: the baseline posted on `comm` now, *request MPI's;
  // *implementation: what ran (mpi_calls.implementation).
  int post_baseline(MPI_Comm comm, RuntimeOp record, const Baseline& baseline, MPI_Request* request,
                    std::uint8_t* implementation);

  // Completes what can be completed without waiting; true while some request of the runtime's
  // cannot complete without the calling thread (wait calls then test in a loop).
  bool progress();
  // The wait/test hooks (collector_hooks.hpp) for the requests above; others are not known here.
  bool knows(std::uint64_t request_key);
  // Called for requests a wait/test completed without an error.
  int finish_request(std::uint64_t request_key);
  void request_freed(std::uint64_t request_key);
  contract::RequestWork tracks(std::uint64_t request_key);

  // A blocking runtime call on `comm` runs after the nonblocking ones posted before it: their jobs
  // ran, and the baselines of those the ranks declined completed (the blocking call waits in node
  // shared memory, where MPI would not progress them, for ranks that may be waiting for those).
  void drain(MPI_Comm comm);
  // The communicator is being freed: its lane finishes, its private duplicate and cache go.
  void forget(MPI_Comm comm);
  // MPI_Finalize: every request completed (MPI is still up), lanes stopped, caches closed.
  void finalize();

private:
  struct Pending {
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Request handle = MPI_REQUEST_NULL; // what the program holds
    bool generalized = false;              // a job's request (else MPI's, of a baseline posted at the call)
    nonblocking::Ticket ticket = 0;
    RuntimeOp record; // the lane's job writes its figures, the calling thread reads them after it ran
    Baseline baseline;
    std::unique_ptr<StagedImages> images;
    MPI_Request baseline_request = MPI_REQUEST_NULL; // a declined job's baseline, in flight
    int rc = MPI_SUCCESS;
    bool freed = false; // MPI_Request_free: nobody will wait for it
  };
  struct CommunicatorState {
    MPI_Comm baseline_comm = MPI_COMM_NULL;  // the private duplicate declined jobs' baselines use
    std::unique_ptr<IpcHandleCache> cache;   // the lane's own (used by its worker only)
    void* stream = nullptr;                  // the lane's kernels' (non-blocking: see Lane)
    std::unique_ptr<StreamSet> more_streams; // created on first use, by the lane's worker only
    std::unique_ptr<SharedStages> stages;    // null: they could not be mapped
  };

  bool progress_locked();
  void act(const nonblocking::NextAction& action);
  // The generalized request completes with rc; a request the program freed is done with then.
  void complete(std::uint64_t request_key, Pending& pending, int rc);
  // The row, and the request forgotten.
  void retire(std::uint64_t request_key);
  // Requests of `comm` not yet Completed; with in_baseline_only, only declined ones.
  bool has_incomplete(MPI_Comm comm, bool in_baseline_only = false) const;

  const contract::CudaPluginHost& host_;
  RuntimeRecords& records_;
  bool cuda_aware_;
  bool finalized_ = false;
  BufferPool pinned_{PoolMemory::PinnedHost, std::size_t{256} << 20};
  std::recursive_mutex mutex_; // the calling thread's tables; forget() and finalize() progress under it
  nonblocking::RequestStates states_;
  std::map<std::uint64_t, std::unique_ptr<Pending>> pending_; // by request key
  std::map<MPI_Comm, CommunicatorState> communicators_;
  std::atomic<std::size_t> incomplete_{0}; // requests MPI cannot complete alone
  // Last, so destroyed first: its workers' jobs use the pending calls and the lanes' caches.
  nonblocking::OrderedLanes lanes_;
};

} // namespace commlens::runtime
