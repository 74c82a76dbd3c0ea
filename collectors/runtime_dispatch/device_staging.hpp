#pragma once
// Host staging of device buffers for the MPI calls the GPU runtime has no algorithm for, while the
// runtime is on and the MPI library is not CUDA-aware: such a library would read a device pointer
// as host memory and crash. Each device buffer of the call is replaced by a pinned host image
// (copied in before the call where MPI reads it, copied back after where MPI writes it), as a
// CUDA-aware MPI's accelerator component does. Nonblocking calls keep their images until the
// request completes (a wait or test call); persistent ones until MPI_Request_free, copying in at
// every MPI_Start. What cannot be staged correctly (one-sided windows, MPI-IO and partitioned
// communication on device memory, whose buffers MPI reads at times the wrappers do not see) is
// refused with an MPI error through the handle's error handler, naming the reason.
//
// How much memory a buffer spans: the call's own count x type size where the types are dense
// (no holes, no displacements), else the rest of the buffer's allocation, which always holds
// everything the call can reach. Either way the range is clamped to the allocation.
#include "collector_hooks.hpp"
#include "mpi_header.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace commlens::pmpi {

// The span of a buffer whose extent the call's arguments do not give simply.
inline constexpr std::uint64_t kWholeAllocation = ~std::uint64_t{0};
// implementations.id of calls staged through host memory (runtime/engine/runtime_records.hpp).
inline constexpr std::uint8_t kHostStagedImplementation = 1;

inline bool staging_on() noexcept {
  return contract::collector_hooks().staging.copy != nullptr;
}

// No default member values: every call's wrapper holds four of these on its stack, and only the
// ones counted in use are ever read (each is assigned whole when it is taken).
struct StagedImage {
  char* user; // the staged range's start in device memory
  char* host; // its pinned image
  std::size_t bytes;
  std::size_t capacity; // of the pinned block, for the pool
  bool copy_back;       // MPI writes this buffer
  bool from_device;     // the image starts as the device's contents
};

inline constexpr int kMaxStagedBuffers = 4;

// One call's staged buffers, on the wrapper's stack.
class DeviceStaging {
public:
  enum class Kind { Blocking, Nonblocking, Persistent };
  explicit DeviceStaging(MPI_Comm comm = MPI_COMM_NULL, Kind kind = Kind::Blocking) noexcept
      : comm_(comm), kind_(kind) {}
  DeviceStaging(const DeviceStaging&) = delete;
  DeviceStaging& operator=(const DeviceStaging&) = delete;
  ~DeviceStaging() {
    if (count_ != 0) [[unlikely]] {
      release();
    }
  }

  // What the call passes to MPI instead of `buffer`: its host image when it is device memory, else
  // buffer itself. span: bytes the call reaches from buffer (kWholeAllocation: not known). output:
  // MPI writes the buffer; fill: an output whose old contents MPI also reads (or keeps where it
  // writes nothing).
  template <typename T> T* stage(T* buffer, std::uint64_t span, bool output, bool fill) noexcept {
    return static_cast<T*>(
        stage_bytes(const_cast<void*>(static_cast<const void*>(buffer)), span, output, fill));
  }
  // Whether any buffer of the call was staged (also after finish).
  bool staged() const noexcept { return staged_; }
  // A buffer could not be staged (no pinned memory, a failed copy): the call must not reach MPI
  // with a device pointer. refuse_call() releases what was staged and raises the error through
  // the communicator's error handler; it returns the error code.
  bool failed() const noexcept { return failed_; }
  int refuse_call() noexcept;

  // After the call. Blocking: outputs copied back, images released. Nonblocking and persistent
  // (request posted): the images pass to the staged-request table. A failed copy makes the call
  // fail with MPI_ERR_OTHER.
  // Inline for the common case, nothing staged: every wrapper of a staged family calls these.
  int finish(int rc) noexcept { return count_ == 0 ? rc : finish_blocking(rc); }
  int finish(int rc, const MPI_Request* request) noexcept {
    return count_ == 0 ? rc : finish_with_request(rc, request);
  }

  // For the span expressions the generator writes.
  static bool dense(MPI_Datatype type) noexcept;
  static std::uint64_t size_of(MPI_Datatype type) noexcept;
  std::uint64_t group_size() const noexcept;

private:
  void* stage_bytes(void* buffer, std::uint64_t span, bool output, bool fill) noexcept;
  int finish_blocking(int rc) noexcept;
  int finish_with_request(int rc, const MPI_Request* request) noexcept;
  void release() noexcept;

  MPI_Comm comm_;
  Kind kind_;
  StagedImage images_[kMaxStagedBuffers];
  int count_ = 0;
  bool staged_ = false;
  bool failed_ = false;
};

// Requests whose buffers are staged: completions copy outputs back, starts copy inputs in.
namespace staged_requests {
// How many requests have staged buffers. Every wait and test call asks whether there are any, so
// the question is an inline load.
extern std::atomic<std::size_t> staged_count;
inline bool any() noexcept {
  return staged_count.load(std::memory_order_relaxed) != 0;
}
// What is staged under the request.
contract::RequestWork tracks(std::uint64_t key) noexcept;
// Before MPI_Start/MPI_Startall: the persistent requests' inputs copied into their images.
void starting(const MPI_Request* requests, int count) noexcept;
// A wait/test call completed the request under key: outputs copied back, a nonblocking request's
// images released. Returns MPI_SUCCESS or MPI_ERR_OTHER (a failed copy).
int completed(std::uint64_t key) noexcept;
// MPI_Request_free: a persistent request's images released (an active nonblocking request's stay
// until MPI_Finalize, since its completion is never seen).
void freed(std::uint64_t key) noexcept;
// MPI_Finalize: every image and kept block freed. Returns the pinned bytes the staging held at
// most during the run and what is still allocated after (an image MPI never completed).
struct PinnedUsage {
  std::size_t peak_bytes;
  std::size_t left_bytes;
};
PinnedUsage release_all() noexcept;
} // namespace staged_requests

// Whether any of the buffers is device memory that staging cannot serve.
bool any_on_device(std::initializer_list<const void*> buffers) noexcept;
// Raise the refusal through the handle's error handler; returns the error code.
enum class Refusal { OneSided, FileIo, Partitioned, StagingFailed };
int refuse_on_communicator(MPI_Comm comm, Refusal refusal) noexcept;
int refuse_on_window(MPI_Win win, Refusal refusal) noexcept;
int refuse_on_file(MPI_File file, Refusal refusal) noexcept;

} // namespace commlens::pmpi
