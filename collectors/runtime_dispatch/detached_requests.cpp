#include "detached_requests.hpp"

#include "collector_hooks.hpp"
#include "device_staging.hpp"
#include "handle_map.hpp"

#include <atomic>
#include <mutex>
#include <vector>

namespace commlens::pmpi::detached_requests {

namespace {

struct Kept {
  MPI_Request request;
  std::uint64_t key;
};

std::mutex mutex;
std::vector<Kept> kept;

// A nonblocking request always (its completion finishes what was posted); a persistent one only
// while MPI has not finished with it (an inactive one is freed at once, its images released).
bool depends_on_completion(MPI_Request request, std::uint64_t key) {
  const auto runtime_tracks = contract::collector_hooks().runtime.tracks;
  contract::RequestWork tracked = staged_requests::tracks(key);
  if (tracked == contract::RequestWork::None && runtime_tracks != nullptr) {
    tracked = runtime_tracks(key);
  }
  if (tracked != contract::RequestWork::Persistent) {
    return tracked == contract::RequestWork::Nonblocking;
  }
  int done = 0;
  return PMPI_Request_get_status(request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done == 0;
}

// What a wait would have done, then the free the program asked for (a persistent request is still
// allocated after its completion; a nonblocking one MPI freed).
void finish(Kept& done) {
  MPI_Status status{};
  staged_requests::completed(done.key);
  if (const auto finish_request = contract::collector_hooks().runtime.finish_request) {
    finish_request(done.key, &status);
  }
  if (done.request != MPI_REQUEST_NULL) {
    staged_requests::freed(done.key);
    if (const auto freed = contract::collector_hooks().runtime.request_freed) {
      freed(done.key);
    }
    PMPI_Request_free(&done.request);
  }
}

} // namespace

std::atomic<bool> kept_any{false};

bool detach(MPI_Request* request) noexcept {
  const std::uint64_t key = contract::handle_key(*request);
  if (*request == MPI_REQUEST_NULL || !depends_on_completion(*request, key)) {
    return false;
  }
  std::lock_guard lock(mutex);
  kept.push_back({*request, key});
  kept_any.store(true, std::memory_order_relaxed);
  *request = MPI_REQUEST_NULL;
  return true;
}

void progress() noexcept {
  std::lock_guard lock(mutex);
  std::erase_if(kept, [](Kept& entry) {
    int done = 0;
    MPI_Request probe = entry.request; // a persistent request keeps its handle after completing
    if (PMPI_Test(&probe, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done == 0) {
      return false;
    }
    entry.request = probe;
    finish(entry);
    return true;
  });
  kept_any.store(!kept.empty(), std::memory_order_relaxed);
}

void finish_all() noexcept {
  std::lock_guard lock(mutex);
  for (Kept& entry : kept) {
    PMPI_Wait(&entry.request, MPI_STATUS_IGNORE);
    finish(entry);
  }
  kept.clear();
  kept_any.store(false, std::memory_order_relaxed);
}

} // namespace commlens::pmpi::detached_requests
