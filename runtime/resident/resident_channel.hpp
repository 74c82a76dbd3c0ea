#pragma once
// A communicator's resident kernel seen from the host (resident_protocol.hpp): this rank's region
// of device memory and the peers' regions mapped through CUDA IPC, the pinned mailbox, the stream
// the kernel runs on, and the launches. The kernel leaves after lingering idle (so that a
// program's cudaDeviceSynchronize or cudaFree waits at most that long for it) and is launched
// again by the next call; so is the kernel of another family of element types when a call reduces
// one of its types (KernelFamily).
#include "mpi_header.hpp"
#include "resident/resident_plan.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace commlens::runtime::resident {

struct Outcome {
  int declined_rank = -1;         // the first rank that declined the call (every rank reports the same)
  std::uint32_t decline = 0;      // its Decline code (transport/buffer_decline.hpp)
  int cuda_error = 0;             // this rank's kernel failed (the call did not complete)
  KernelTimes times{};            // block 0's times of the call (GPU clock)
  std::uint64_t host_wait_ns = 0; // from posting the call to seeing it done (host clock)
  bool launched = false;          // the call launched the kernel: its first, or it had lingered out
};

class Channel {
public:
  // Collective over comm (the ranks of one GPU): null on every rank when any rank failed; *why
  // says what failed. slot_bytes: the largest contribution a call may have.
  static std::unique_ptr<Channel> open(MPI_Comm comm, int rank, int size, std::uint64_t slot_bytes,
                                       std::uint64_t linger_ns, std::string* why);
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel();

  // The GPU (device ordinal) the kernel runs on: the current one when the channel opened.
  int device() const noexcept { return device_; }
  // Runs one call: every rank of the communicator must run its call with the same number, in the
  // same order. `decline` (non-zero) takes part without data, and every rank sees the call declined.
  Outcome run(const Plan& plan, std::uint32_t decline, Reduction reduction) noexcept;

private:
  Channel() = default;
  void launch() noexcept;
  // Posts the call and launches a kernel when the last one has left (true: it launched).
  bool post(const Call& call) noexcept;
  int wait_done(std::uint64_t number, bool* launched) noexcept;

  int size_ = 0;
  int device_ = -1;
  KernelArguments arguments_;  // regions: this rank's own allocation, the peers' mappings
  Mailbox* mailbox_ = nullptr; // host address (arguments_.mailbox: the kernel's)
  void* stream_ = nullptr;
  // The family of the kernel launched last, and launched next unless a call needs another.
  KernelFamily family_ = KernelFamily::Floats;
  std::uint64_t number_ = 0; // the last call posted
  bool failed_ = false;      // a kernel failed: the channel takes no more calls
};

} // namespace commlens::runtime::resident
