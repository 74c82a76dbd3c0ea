#pragma once
// What the wrappers of `runtime` functions (mpi_functions.spec) call instead of PMPI: the GPU
// collective runtime's entry when libcommlens_cuda.so installed one, else PMPI itself. call is
// null while collection is off; the runtime still runs then, it is only not recorded.
//
// The call's recording (pmpi::CallRecording) and the wait's request snapshot (pmpi::RequestSnapshot)
// are template parameters, so that this folder needs nothing of the PMPI collector that includes it.
#include "collector_hooks.hpp"
#include "detached_requests.hpp"
#include "device_staging.hpp"

#include <sched.h>

namespace commlens::pmpi::runtime {

// The wrapper of a `runtime` function calls run<its RuntimeCallEntries member, its PMPI function>
// with the function's arguments (generate_wrappers.py writes the call).
template <auto Entry, auto Pmpi, typename Recording, typename... Args>
inline int run(Recording* call, Args... args) noexcept {
  const auto entry = contract::collector_hooks().runtime.*Entry;
  if (entry == nullptr) [[likely]] {
    return Pmpi(args...);
  }
  std::uint8_t implementation = 0;
  const int rc = entry(args..., call != nullptr ? call->call_id() : 0, &implementation);
  if (call != nullptr) {
    call->set_implementation(implementation);
  }
  return rc;
}

// After a wait/test call: `completed` requests completed, the i-th at snapshot index indices[i]
// (indices null: i) with its status statuses[i]. The runtime finishes those it posted, inside the
// call, so the call's time includes that work. `many`: the call reports errors per status
// (MPI_ERR_IN_STATUS) rather than in its return code. Requests whose buffers the wrappers staged
// through host memory (device_staging.hpp) are finished first: their outputs copied to the device.
template <typename Snapshot>
inline int finish_completed(int rc, const Snapshot& requests, int completed, const int* indices,
                            MPI_Status* statuses, bool many) noexcept {
  if (detached_requests::any()) [[unlikely]] {
    detached_requests::progress();
  }
  const auto finish = contract::collector_hooks().runtime.finish_request;
  const bool staged = staged_requests::any();
  if ((finish == nullptr && !staged) || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)) [[likely]] {
    return rc;
  }
  for (int i = 0; i < completed; ++i) {
    if (rc == MPI_ERR_IN_STATUS && statuses[i].MPI_ERROR != MPI_SUCCESS) {
      continue; // not completed (MPI_ERR_PENDING) or failed in MPI already
    }
    const std::uint64_t key = requests.key(indices != nullptr ? indices[i] : i);
    int finished = staged ? staged_requests::completed(key) : MPI_SUCCESS;
    if (finish != nullptr && finished == MPI_SUCCESS) {
      finished = finish(key, &statuses[i]);
    }
    if (finished != MPI_SUCCESS) {
      statuses[i].MPI_ERROR = finished;
      rc = many ? MPI_ERR_IN_STATUS : finished;
    }
  }
  return rc;
}

// The wait and test calls as the wrappers make them: the runtime's nonblocking collectives are
// progressed first, and while some of them are incomplete a wait is a loop of its test (the same
// result; MPI never completes those requests by itself). Without them: PMPI's call, one load more.
namespace completion {

inline bool runtime_incomplete() noexcept {
  const auto progress = contract::collector_hooks().runtime.progress_requests;
  return progress != nullptr && progress();
}

// While the runtime's nonblocking collectives are incomplete: test, and between tests give the core
// away (sched_yield). Their jobs run on the runtime's lane threads; a launcher that binds a rank to
// one core (Open MPI does for two processes) would otherwise leave a lane only the time slices the
// scheduler takes from this loop. Returns whether `test` finished the wait (its rc in *rc).
template <typename Test> bool poll_while_runtime_incomplete(const Test& test, int* rc) noexcept {
  while (runtime_incomplete()) {
    bool done = false;
    *rc = test(&done);
    if (*rc != MPI_SUCCESS || done) {
      return true;
    }
    sched_yield();
  }
  return false;
}

inline int wait(MPI_Request* request, MPI_Status* status) noexcept {
  int rc = MPI_SUCCESS;
  const auto test = [&](bool* done) {
    int flag = 0;
    const int result = PMPI_Test(request, &flag, status);
    *done = flag != 0;
    return result;
  };
  return poll_while_runtime_incomplete(test, &rc) ? rc : PMPI_Wait(request, status);
}

inline int test(MPI_Request* request, int* flag, MPI_Status* status) noexcept {
  runtime_incomplete();
  return PMPI_Test(request, flag, status);
}

inline int waitall(int count, MPI_Request requests[], MPI_Status statuses[]) noexcept {
  int rc = MPI_SUCCESS;
  const auto test = [&](bool* done) {
    int flag = 0;
    const int result = PMPI_Testall(count, requests, &flag, statuses);
    *done = flag != 0;
    return result;
  };
  return poll_while_runtime_incomplete(test, &rc) ? rc : PMPI_Waitall(count, requests, statuses);
}

inline int testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) noexcept {
  runtime_incomplete();
  return PMPI_Testall(count, requests, flag, statuses);
}

inline int waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) noexcept {
  int rc = MPI_SUCCESS;
  const auto test = [&](bool* done) {
    int flag = 0;
    const int result = PMPI_Testany(count, requests, index, &flag, status);
    *done = flag != 0; // flag with index MPI_UNDEFINED: no active request, as MPI_Waitany says
    return result;
  };
  return poll_while_runtime_incomplete(test, &rc) ? rc : PMPI_Waitany(count, requests, index, status);
}

inline int testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) noexcept {
  runtime_incomplete();
  return PMPI_Testany(count, requests, index, flag, status);
}

inline int waitsome(int count, MPI_Request requests[], int* outcount, int indices[],
                    MPI_Status statuses[]) noexcept {
  int rc = MPI_SUCCESS;
  const auto test = [&](bool* done) {
    const int result = PMPI_Testsome(count, requests, outcount, indices, statuses);
    *done = *outcount != 0; // MPI_UNDEFINED: no active request, as MPI_Waitsome says
    return result;
  };
  return poll_while_runtime_incomplete(test, &rc)
             ? rc
             : PMPI_Waitsome(count, requests, outcount, indices, statuses);
}

inline int testsome(int count, MPI_Request requests[], int* outcount, int indices[],
                    MPI_Status statuses[]) noexcept {
  runtime_incomplete();
  return PMPI_Testsome(count, requests, outcount, indices, statuses);
}

} // namespace completion

// MPI_Request_free: a request the runtime or the staging still has work under is kept until MPI
// completes it (detached_requests.hpp); any other is freed after they released what they posted.
inline int free_request(MPI_Request* request) noexcept {
  if (detached_requests::any()) [[unlikely]] {
    detached_requests::progress();
  }
  const std::uint64_t request_key = contract::handle_key(*request);
  if (detached_requests::detach(request)) {
    return MPI_SUCCESS;
  }
  if (staged_requests::any()) [[unlikely]] {
    staged_requests::freed(request_key);
  }
  if (const auto release = contract::collector_hooks().runtime.request_freed) [[unlikely]] {
    release(request_key);
  }
  return PMPI_Request_free(request);
}

} // namespace commlens::pmpi::runtime
