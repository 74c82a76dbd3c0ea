#include "resident/resident_channel.hpp"

#include "device/reduction_types.hpp"
#include "resident/resident_kernel.hpp"
#include "transport/node_segment.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <vector>

namespace commlens::runtime::resident {

namespace {

// What each rank tells the others when the channel opens.
struct Announcement {
  std::int32_t ok = 0;
  std::int32_t pid = 0;
  cudaIpcMemHandle_t handle{};
};

std::uint64_t round_up(std::uint64_t bytes, std::uint64_t to) {
  return (bytes + to - 1) / to * to;
}

std::string cuda_problem(const char* what, cudaError_t error) {
  return std::string(what) + ": " + cudaGetErrorString(error);
}

// This rank's part of the channel: the mailbox, the stream and its own region (its line zeroed).
cudaError_t set_up_locally(KernelArguments& arguments, Mailbox** mailbox, void** stream,
                           std::uint64_t region_bytes, cudaIpcMemHandle_t* handle) {
  void* host = nullptr;
  cudaError_t error = cudaHostAlloc(&host, sizeof(Mailbox), cudaHostAllocMapped);
  if (error != cudaSuccess) {
    return error;
  }
  *mailbox = static_cast<Mailbox*>(host);
  std::memset(host, 0, sizeof(Mailbox));
  void* device_address = nullptr;
  if ((error = cudaHostGetDevicePointer(&device_address, host, 0)) != cudaSuccess) {
    return error;
  }
  arguments.mailbox = static_cast<Mailbox*>(device_address);
  cudaStream_t created = nullptr;
  if ((error = cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking)) != cudaSuccess) {
    return error;
  }
  *stream = created;
  void* region = nullptr;
  if ((error = cudaMalloc(&region, region_bytes)) != cudaSuccess) {
    return error;
  }
  arguments.regions[arguments.me] = static_cast<char*>(region);
  if ((error = cudaMemsetAsync(region, 0, kLineBytes, created)) != cudaSuccess ||
      (error = cudaStreamSynchronize(created)) != cudaSuccess) {
    return error;
  }
  return cudaIpcGetMemHandle(handle, region);
}

} // namespace

std::unique_ptr<Channel> Channel::open(MPI_Comm comm, int rank, int size, std::uint64_t slot_bytes,
                                       std::uint64_t linger_ns, std::string* why) {
  std::unique_ptr<Channel> channel(new Channel());
  KernelArguments& arguments = channel->arguments_;
  channel->size_ = std::min(size, kMaxRanks);
  cudaGetDevice(&channel->device_);
  arguments.ranks = size;
  arguments.me = rank;
  arguments.slot_bytes = round_up(slot_bytes, kHalfAlignment);
  arguments.linger_ns = linger_ns;
  std::string problem;
  Announcement mine;
  mine.pid = static_cast<std::int32_t>(getpid());
  const cudaError_t error = size > kMaxRanks
                                ? cudaErrorInvalidValue
                                : set_up_locally(arguments, &channel->mailbox_, &channel->stream_,
                                                 kLineBytes + 2 * arguments.slot_bytes, &mine.handle);
  if (error != cudaSuccess) {
    problem = cuda_problem("setting up the resident kernel's memory", error);
    cudaGetLastError();
  }
  mine.ok = error == cudaSuccess ? 1 : 0;
  std::vector<Announcement> everyone(static_cast<std::size_t>(size));
  PMPI_Allgather(&mine, sizeof(Announcement), MPI_BYTE, everyone.data(), sizeof(Announcement), MPI_BYTE,
                 comm);
  int opened = 1;
  for (int peer = 0; peer < size && opened == 1; ++peer) {
    if (everyone[static_cast<std::size_t>(peer)].ok == 0) {
      opened = 0;
      if (problem.empty()) {
        problem = "rank " + std::to_string(peer) + " could not set up the resident kernel's memory";
      }
    }
  }
  for (int peer = 0; peer < size && opened == 1; ++peer) {
    if (peer == rank) {
      continue;
    }
    void* mapped = nullptr;
    if (const cudaError_t open_error = cudaIpcOpenMemHandle(
            &mapped, everyone[static_cast<std::size_t>(peer)].handle, cudaIpcMemLazyEnablePeerAccess);
        open_error != cudaSuccess) {
      problem = cuda_problem("opening a peer's resident region", open_error);
      cudaGetLastError();
      opened = 0;
    } else {
      arguments.regions[peer] = static_cast<char*>(mapped);
    }
  }
  int everywhere = 0;
  PMPI_Allreduce(&opened, &everywhere, 1, MPI_INT, MPI_MIN, comm);
  if (everywhere == 0) {
    *why = problem.empty() ? "another rank could not map the resident regions" : problem;
    return nullptr; // the destructor releases what was set up
  }
  return channel;
}

Channel::~Channel() {
  if (arguments_.epoch > 0 && !failed_ && mailbox_->exited != arguments_.epoch) {
    Call close;
    close.number = ++number_;
    close.leave = 1;
    post(close);
    bool launched = false;
    wait_done(close.number, &launched);
  }
  if (stream_ != nullptr) {
    cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)); // the kernel has left
  }
  for (int rank = 0; rank < size_; ++rank) {
    if (arguments_.regions[rank] != nullptr) {
      if (rank == arguments_.me) {
        cudaFree(arguments_.regions[rank]);
      } else {
        cudaIpcCloseMemHandle(arguments_.regions[rank]);
      }
    }
  }
  if (stream_ != nullptr) {
    cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  }
  if (mailbox_ != nullptr) {
    cudaFreeHost(mailbox_);
  }
  cudaGetLastError();
}

void Channel::launch() noexcept {
  ++arguments_.epoch;
  if (launch_resident_kernel(arguments_, family_, stream_) != 0) {
    cudaGetLastError();
    failed_ = true;
  }
}

bool Channel::post(const Call& call) noexcept {
  // Whether the last kernel has left is read before the call is posted: one that leaves after
  // this read sees the call first, or leaves and is found gone by wait_done.
  const bool gone = arguments_.epoch == 0 || mailbox_->exited == arguments_.epoch;
  // Only the steps the call has cross to the kernel (it reads the rest, unused).
  std::memcpy(&mailbox_->call, &call, offsetof(Call, steps) + call.step_count * sizeof(Step));
  std::atomic_thread_fence(std::memory_order_release); // the call before its number (x86: in order)
  mailbox_->posted = call.number;
  if (gone) {
    launch();
  }
  return gone;
}

int Channel::wait_done(std::uint64_t number, bool* launched) noexcept {
  for (int spins = 0; mailbox_->done < number; ++spins) {
    if (failed_) {
      return static_cast<int>(cudaErrorLaunchFailure);
    }
    if (mailbox_->exited == arguments_.epoch && mailbox_->done < number) {
      launch(); // it lingered out before it saw the call
      *launched = true;
      continue;
    }
    if (spins % 4096 == 4095) {
      if (const cudaError_t state = cudaStreamQuery(static_cast<cudaStream_t>(stream_));
          state != cudaSuccess && state != cudaErrorNotReady) {
        cudaGetLastError();
        failed_ = true;
        return static_cast<int>(state);
      }
    }
    pause_spinning(spins);
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  return 0;
}

Outcome Channel::run(const Plan& plan, std::uint32_t decline, Reduction reduction) noexcept {
  Outcome outcome;
  if (failed_) {
    outcome.cuda_error = static_cast<int>(cudaErrorLaunchFailure);
    return outcome;
  }
  Call call;
  call.number = ++number_;
  call.decline = decline;
  call.reduction = reduction;
  call.element_bytes = static_cast<std::uint32_t>(element_size(reduction.type));
  if (decline == 0) {
    call.family = family_for(plan, reduction);
    if (call.family != KernelFamily::Any) {
      family_ = call.family; // the next launch's (a running kernel of another family leaves for it)
    }
    call.contribution = plan.contribution;
    call.contribution_bytes = plan.contribution_bytes;
    call.step_count = plan.step_count;
    std::copy(plan.steps, plan.steps + plan.step_count, call.steps);
    call.blocks = blocks_for(plan, arguments_.ranks, call.element_bytes);
  }
  const auto posted_at = std::chrono::steady_clock::now();
  outcome.launched = post(call);
  outcome.cuda_error = wait_done(call.number, &outcome.launched);
  outcome.host_wait_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - posted_at)
          .count());
  if (outcome.cuda_error == 0) {
    outcome.declined_rank = mailbox_->declined_rank;
    outcome.decline = mailbox_->decline;
    outcome.times = {mailbox_->times.taken, mailbox_->times.flagged, mailbox_->times.arrived,
                     mailbox_->times.done};
  }
  return outcome;
}

} // namespace commlens::runtime::resident
