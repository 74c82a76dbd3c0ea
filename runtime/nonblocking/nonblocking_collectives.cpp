#include "nonblocking/nonblocking_collectives.hpp"

#include "collectives/runtime_state.hpp"

#include "handle_map.hpp"

#include <cuda_runtime.h>

#include <vector>

namespace commlens::runtime {

namespace {

// Mappings a lane's cache keeps: its own bound, beside the blocking calls' cache.
constexpr std::size_t kLaneCacheMappings = 64;

nonblocking::LaneKey lane_of(MPI_Comm comm) {
  return contract::handle_key(comm);
}

// An event on the legacy default stream now (null on a CUDA error: the job then waits for that
// stream as it is when it runs, later but as correct).
void* ready_event() {
  cudaEvent_t event = nullptr;
  if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  if (cudaEventRecord(event, cudaStreamLegacy) != cudaSuccess) {
    cudaGetLastError();
    cudaEventDestroy(event);
    return nullptr;
  }
  return event;
}

// The generalized request's status: empty, as a collective's (MPI_ERROR: the call's error).
int query_status(void* state, MPI_Status* status) {
  const int rc = static_cast<const int*>(state)[0];
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = rc;
  return rc;
}

int free_nothing(void* /*state*/) {
  return MPI_SUCCESS; // the Pending goes with its row (NonblockingCollectives::retire)
}

// MPI: cancelling a nonblocking collective's request is erroneous; MPI_Cancel reports an error.
int refuse_cancel(void* /*state*/, int /*complete*/) {
  return MPI_ERR_REQUEST;
}

} // namespace

int NonblockingCollectives::post(MPI_Comm comm, int device, RuntimeOp record, Job job, Baseline baseline,
                                 MPI_Request* request) {
  std::lock_guard lock(mutex_);
  CommunicatorState& communicator = communicators_[comm];
  if (communicator.baseline_comm == MPI_COMM_NULL) {
    if (const int rc = PMPI_Comm_dup(comm, &communicator.baseline_comm); rc != MPI_SUCCESS) {
      communicators_.erase(comm);
      return rc;
    }
    communicator.cache = std::make_unique<IpcHandleCache>(kLaneCacheMappings);
    communicator.more_streams = std::make_unique<StreamSet>(true);
    cudaStream_t stream = nullptr;
    communicator.stream =
        cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess ? stream : nullptr;
    int rank = 0;
    int size = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    auto stages = std::make_unique<SharedStages>();
    if (stages->open(comm, rank, size)) {
      communicator.stages = std::move(stages);
    }
  }
  if (communicator.stages == nullptr) { // on every rank: the mapping is collective
    record.decision = "fallback";
    record.reason = "node shared memory for the nonblocking calls' fallback could not be mapped";
    std::uint8_t ran = 0; // mpi_calls.implementation keeps the intent, as for calls declined in a job
    return post_baseline(comm, std::move(record), baseline, request, &ran);
  }
  auto pending = std::make_unique<Pending>();
  pending->comm = comm;
  pending->generalized = true;
  pending->record = std::move(record);
  pending->baseline = std::move(baseline);
  // query_status reads the call's return code through the state pointer.
  if (const int rc = PMPI_Grequest_start(query_status, free_nothing, refuse_cancel, &pending->rc, request);
      rc != MPI_SUCCESS) {
    return rc;
  }
  pending->handle = *request;
  const std::uint64_t key = contract::handle_key(*request);
  Pending* const raw = pending.get();
  const Lane lane{*communicator.cache, communicator.stream, ready_event(), *communicator.stages,
                  *communicator.more_streams};
  pending->ticket = lanes_.post(lane_of(comm), [raw, lane, device, job = std::move(job)] {
    nonblocking::Outcome outcome{MPI_SUCCESS, true, "the lane could not make the caller's GPU current"};
    if (cudaSetDevice(device) == cudaSuccess) {
      outcome = job(lane, raw->record);
    }
    cudaGetLastError();
    if (lane.ready_event != nullptr) {
      cudaEventDestroy(static_cast<cudaEvent_t>(lane.ready_event));
    }
    return outcome;
  });
  states_.add(key, lane_of(comm), pending->ticket);
  pending_[key] = std::move(pending);
  ++incomplete_;
  return MPI_SUCCESS;
}

int NonblockingCollectives::post_baseline(MPI_Comm comm, RuntimeOp record, const Baseline& baseline,
                                          MPI_Request* request, std::uint8_t* implementation) {
  std::lock_guard lock(mutex_);
  auto pending = std::make_unique<Pending>();
  pending->comm = comm;
  pending->images = std::make_unique<StagedImages>(pinned_, cuda_aware_);
  pending->record = std::move(record);
  const int rc = baseline(comm, *pending->images, request);
  pending->record.implementation =
      pending->images->staged() ? Implementation::MpiHostStaged : Implementation::Mpi;
  pending->record.algorithm = pending->images->staged() ? "host_staged" : "pmpi";
  pending->record.bytes_host = pending->images->bytes_host();
  pending->record.chunks = pending->images->staged() ? 1 : 0;
  *implementation = static_cast<std::uint8_t>(pending->record.implementation);
  if (rc != MPI_SUCCESS || *request == MPI_REQUEST_NULL) {
    pending->record.end_ns = pending->record.start_ns;
    records_.add(std::move(pending->record));
    return rc;
  }
  pending->handle = *request;
  const std::uint64_t key = contract::handle_key(*request);
  if (const auto earlier = pending_.find(key); earlier != pending_.end() && !earlier->second->generalized) {
    // MPI gave this handle to an earlier baseline still unfinished here: a request it completed at
    // once and shares between calls (Open MPI's nonblocking collectives on a one-process
    // communicator), so that call is done: its outputs go back now.
    earlier->second->images->copy_back();
    retire(key);
  }
  pending_[key] = std::move(pending);
  return MPI_SUCCESS;
}

bool NonblockingCollectives::progress() {
  if (incomplete_.load(std::memory_order_relaxed) == 0) {
    return false;
  }
  std::lock_guard lock(mutex_);
  return progress_locked();
}

bool NonblockingCollectives::progress_locked() {
  for (const nonblocking::NextAction& action :
       states_.next_actions([this](nonblocking::Ticket ticket) { return lanes_.poll(ticket); })) {
    act(action);
  }
  std::vector<std::uint64_t> done;
  for (auto& [key, pending] : pending_) {
    if (pending->baseline_request == MPI_REQUEST_NULL) {
      continue;
    }
    int flag = 0;
    MPI_Status status{};
    const int rc = PMPI_Test(&pending->baseline_request, &flag, &status);
    if (rc != MPI_SUCCESS || flag != 0) {
      pending->baseline_request = MPI_REQUEST_NULL;
      done.push_back(key);
      int result = rc;
      if (result == MPI_SUCCESS && !pending->images->copy_back()) {
        result = MPI_ERR_OTHER;
      }
      states_.apply(key, nonblocking::RequestEvent::BaselineDone);
      pending->rc = result;
    }
  }
  for (const std::uint64_t key : done) {
    complete(key, *pending_.at(key), pending_.at(key)->rc);
  }
  return incomplete_.load(std::memory_order_relaxed) > 0;
}

void NonblockingCollectives::act(const nonblocking::NextAction& action) {
  Pending& pending = *pending_.at(action.request_key);
  lanes_.retire(pending.ticket);
  if (action.event == nonblocking::RequestEvent::JobRan) {
    states_.apply(action.request_key, nonblocking::RequestEvent::RequestCompleted);
    complete(action.request_key, pending, action.outcome.rc);
    return;
  }
  // Every rank's job declined this call: the baseline, on the private duplicate, in lane order.
  pending.record.decision = "fallback";
  pending.record.reason = action.outcome.reason;
  pending.images = std::make_unique<StagedImages>(pinned_, cuda_aware_);
  const int rc = pending.baseline(communicators_.at(pending.comm).baseline_comm, *pending.images,
                                  &pending.baseline_request);
  pending.record.implementation =
      pending.images->staged() ? Implementation::MpiHostStaged : Implementation::Mpi;
  pending.record.algorithm = pending.images->staged() ? "host_staged" : "pmpi";
  pending.record.bytes_host = pending.images->bytes_host();
  pending.record.chunks = pending.images->staged() ? 1 : 0;
  states_.apply(action.request_key, nonblocking::RequestEvent::BaselinePosted);
  if (rc != MPI_SUCCESS || pending.baseline_request == MPI_REQUEST_NULL) {
    pending.baseline_request = MPI_REQUEST_NULL;
    states_.apply(action.request_key, nonblocking::RequestEvent::BaselineDone);
    complete(action.request_key, pending, rc);
  }
}

void NonblockingCollectives::complete(std::uint64_t request_key, Pending& pending, int rc) {
  pending.rc = rc;
  PMPI_Grequest_complete(pending.handle);
  --incomplete_;
  if (pending.freed) {
    states_.apply(request_key, nonblocking::RequestEvent::Returned);
    retire(request_key);
  }
}

void NonblockingCollectives::retire(std::uint64_t request_key) {
  const auto found = pending_.find(request_key);
  found->second->record.end_ns = host_.now_ns();
  records_.add(std::move(found->second->record));
  states_.remove(request_key);
  pending_.erase(found);
}

bool NonblockingCollectives::knows(std::uint64_t request_key) {
  std::lock_guard lock(mutex_);
  return pending_.contains(request_key);
}

int NonblockingCollectives::finish_request(std::uint64_t request_key) {
  std::lock_guard lock(mutex_);
  const auto found = pending_.find(request_key);
  if (found == pending_.end()) {
    return MPI_SUCCESS;
  }
  Pending& pending = *found->second;
  int rc = pending.rc;
  if (pending.generalized) {
    states_.apply(request_key, nonblocking::RequestEvent::Returned);
  } else if (!pending.images->copy_back()) {
    rc = MPI_ERR_OTHER; // MPI finished the baseline posted at the call: its outputs go back now
  }
  retire(request_key);
  return rc;
}

void NonblockingCollectives::request_freed(std::uint64_t request_key) {
  std::lock_guard lock(mutex_);
  const auto found = pending_.find(request_key);
  if (found == pending_.end() || !found->second->generalized) {
    return;
  }
  found->second->freed = true;
  if (states_.state(request_key) == nonblocking::RequestState::Completed) {
    states_.apply(request_key, nonblocking::RequestEvent::Returned);
    retire(request_key);
  }
}

contract::RequestWork NonblockingCollectives::tracks(std::uint64_t request_key) {
  std::lock_guard lock(mutex_);
  const auto found = pending_.find(request_key);
  // A baseline posted at the call is MPI's request: its completion must still copy the outputs
  // back, so a freed one is kept until then (detached_requests.hpp). A generalized request is
  // completed by progress() whether freed or not.
  return found != pending_.end() && !found->second->generalized ? contract::RequestWork::Nonblocking
                                                                : contract::RequestWork::None;
}

void NonblockingCollectives::drain(MPI_Comm comm) {
  lanes_.drain(lane_of(comm));
  if (incomplete_.load(std::memory_order_relaxed) == 0) {
    return;
  }
  std::lock_guard lock(mutex_);
  progress_locked(); // posts the declined ones' baselines
  while (has_incomplete(comm, true)) {
    progress_locked();
  }
}

bool NonblockingCollectives::has_incomplete(MPI_Comm comm, bool in_baseline_only) const {
  using nonblocking::RequestState;
  for (const auto& [key, pending] : pending_) {
    const std::optional<RequestState> state = states_.state(key);
    if (pending->comm == comm && pending->generalized && state < RequestState::Completed &&
        (!in_baseline_only || state >= RequestState::Declined)) {
      return true;
    }
  }
  return false;
}

void NonblockingCollectives::forget(MPI_Comm comm) {
  std::lock_guard lock(mutex_);
  const auto found = communicators_.find(comm);
  if (found == communicators_.end()) {
    return;
  }
  lanes_.close(lane_of(comm)); // every job of the communicator ran
  while (has_incomplete(comm)) {
    progress_locked(); // declined jobs' baselines, which MPI finishes with the other ranks
  }
  PMPI_Comm_free(&found->second.baseline_comm);
  found->second.cache->close_all();
  if (found->second.stream != nullptr) {
    cudaStreamDestroy(static_cast<cudaStream_t>(found->second.stream));
  }
  communicators_.erase(found);
}

void NonblockingCollectives::finalize() {
  std::lock_guard lock(mutex_);
  if (finalized_) {
    return;
  }
  finalized_ = true;
  while (!communicators_.empty()) {
    forget(communicators_.begin()->first);
  }
  // Requests the program never waited for still get their rows.
  std::vector<std::uint64_t> left;
  for (const auto& [key, pending] : pending_) {
    left.push_back(key);
  }
  for (const std::uint64_t key : left) {
    if (pending_.at(key)->generalized) {
      states_.apply(key, nonblocking::RequestEvent::Returned);
    }
    retire(key);
  }
  pinned_.trim();
}

} // namespace commlens::runtime

namespace commlens::runtime {

void drain_nonblocking(MPI_Comm comm) {
  if (const auto& nonblocking = runtime_state().nonblocking) {
    nonblocking->drain(comm);
  }
}

} // namespace commlens::runtime
