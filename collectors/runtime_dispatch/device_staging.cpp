#include "device_staging.hpp"

#include "handle_map.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace commlens::pmpi {

namespace {

const contract::DeviceStagingOps& ops() noexcept {
  return contract::collector_hooks().staging;
}

int refusal_code(Refusal refusal) noexcept;

// Pinned blocks in power-of-two sizes, kept for reuse up to a bound: pinning memory costs far more
// than the copies of a small message, and a program that stages every call reuses the same sizes.
class PinnedPool {
public:
  struct Block {
    char* memory = nullptr;
    std::size_t capacity = 0;
  };

  Block acquire(std::size_t bytes) {
    const std::size_t capacity = std::bit_ceil(std::max(bytes, kSmallest));
    std::lock_guard lock(mutex_);
    auto& blocks = free_[capacity];
    if (!blocks.empty()) {
      char* memory = blocks.back();
      blocks.pop_back();
      cached_bytes_ -= capacity;
      in_use_bytes_ += capacity;
      return {memory, capacity};
    }
    char* memory = static_cast<char*>(ops().allocate_pinned(capacity));
    if (memory != nullptr) {
      in_use_bytes_ += capacity;
      peak_bytes_ = std::max(peak_bytes_, in_use_bytes_ + cached_bytes_);
    }
    return {memory, capacity};
  }

  void release(const Block& block) {
    {
      std::lock_guard lock(mutex_);
      in_use_bytes_ -= block.capacity;
      if (cached_bytes_ + block.capacity <= kCachedBytes) {
        free_[block.capacity].push_back(block.memory);
        cached_bytes_ += block.capacity;
        return;
      }
    }
    ops().free_pinned(block.memory);
  }

  void clear() {
    std::lock_guard lock(mutex_);
    for (auto& [capacity, blocks] : free_) {
      for (char* memory : blocks) {
        ops().free_pinned(memory);
      }
    }
    free_.clear();
    cached_bytes_ = 0;
  }

  // Pinned bytes allocated at most at once since the last look, and now (images in use and blocks
  // kept for reuse).
  std::pair<std::size_t, std::size_t> take_usage() {
    std::lock_guard lock(mutex_);
    const std::size_t now = in_use_bytes_ + cached_bytes_;
    return {std::exchange(peak_bytes_, now), now};
  }

private:
  static constexpr std::size_t kSmallest = 4096;
  static constexpr std::size_t kCachedBytes = std::size_t{256} << 20;
  std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<char*>> free_;
  std::size_t cached_bytes_ = 0;
  std::size_t in_use_bytes_ = 0;
  std::size_t peak_bytes_ = 0;
};

PinnedPool& pool() {
  static PinnedPool instance;
  return instance;
}

void release_image(StagedImage& image) {
  if (image.host != nullptr) {
    pool().release({image.host, image.capacity});
    image.host = nullptr;
  }
}

bool copy_in(const StagedImage& image) {
  return ops().copy(image.host, image.user, image.bytes);
}

bool copy_back(const StagedImage& image) {
  return !image.copy_back || ops().copy(image.user, image.host, image.bytes);
}

struct StagedRequest {
  StagedImage images[kMaxStagedBuffers];
  int count = 0;
  bool persistent = false;
};

class StagedRequestTable {
public:
  void add(std::uint64_t key, const StagedRequest& request) {
    std::lock_guard lock(mutex_);
    if (auto old = requests_.find(key); old != requests_.end()) {
      // A handle MPI gave out again while its earlier call is still unfinished here: a request MPI
      // completed at once and shares between calls (Open MPI's nonblocking collectives on a
      // one-process communicator all return the same, already complete, request), or one freed
      // unseen. Either way MPI is done with that earlier call: its outputs go back now.
      if (!old->second.persistent) {
        for (int i = 0; i < old->second.count; ++i) {
          copy_back(old->second.images[i]);
        }
      }
      release_all_of(old->second);
      old->second = request;
      return;
    }
    requests_.emplace(key, request);
    staged_requests::staged_count.store(requests_.size(), std::memory_order_relaxed);
  }

  contract::RequestWork tracks(std::uint64_t key) {
    std::lock_guard lock(mutex_);
    const auto found = requests_.find(key);
    if (found == requests_.end()) {
      return contract::RequestWork::None;
    }
    return found->second.persistent ? contract::RequestWork::Persistent : contract::RequestWork::Nonblocking;
  }

  void starting(std::uint64_t key) {
    std::lock_guard lock(mutex_);
    const auto found = requests_.find(key);
    if (found == requests_.end()) {
      return;
    }
    for (int i = 0; i < found->second.count; ++i) {
      const StagedImage& image = found->second.images[i];
      if (image.from_device) {
        copy_in(image);
      }
    }
  }

  int completed(std::uint64_t key) {
    std::lock_guard lock(mutex_);
    const auto found = requests_.find(key);
    if (found == requests_.end()) {
      return MPI_SUCCESS;
    }
    bool copied = true;
    for (int i = 0; i < found->second.count; ++i) {
      copied = copy_back(found->second.images[i]) && copied;
    }
    if (!found->second.persistent) {
      erase_locked(found);
    }
    return copied ? MPI_SUCCESS : MPI_ERR_OTHER;
  }

  void freed(std::uint64_t key) {
    std::lock_guard lock(mutex_);
    const auto found = requests_.find(key);
    if (found != requests_.end() && found->second.persistent) {
      erase_locked(found);
    }
  }

  void clear() {
    std::lock_guard lock(mutex_);
    for (auto& [key, request] : requests_) {
      release_all_of(request);
    }
    requests_.clear();
    staged_requests::staged_count.store(0, std::memory_order_relaxed);
  }

private:
  using Map = std::unordered_map<std::uint64_t, StagedRequest>;
  static void release_all_of(StagedRequest& request) {
    for (int i = 0; i < request.count; ++i) {
      release_image(request.images[i]);
    }
  }
  void erase_locked(Map::iterator found) {
    release_all_of(found->second);
    requests_.erase(found);
    staged_requests::staged_count.store(requests_.size(), std::memory_order_relaxed);
  }

  std::mutex mutex_;
  Map requests_;
};

StagedRequestTable& table() {
  static StagedRequestTable instance;
  return instance;
}

} // namespace

void* DeviceStaging::stage_bytes(void* buffer, std::uint64_t span, bool output, bool fill) noexcept {
  if (buffer == nullptr || buffer == MPI_IN_PLACE || count_ == kMaxStagedBuffers ||
      !ops().on_device(buffer)) {
    return buffer;
  }
  const void* base = nullptr;
  std::size_t allocation_bytes = 0;
  if (!ops().allocation(buffer, &base, &allocation_bytes)) {
    failed_ = true;
    return nullptr;
  }
  char* const start = static_cast<char*>(buffer);
  char* const allocation = static_cast<char*>(const_cast<void*>(base));
  const std::size_t to_end = static_cast<std::size_t>(allocation + allocation_bytes - start);
  // A span not known: the whole allocation, from its start (a datatype's lower bound may be negative).
  char* const from = span == kWholeAllocation ? allocation : start;
  const std::size_t bytes =
      span == kWholeAllocation ? allocation_bytes : std::min<std::uint64_t>(span, to_end);
  if (bytes == 0) {
    return buffer;
  }
  const PinnedPool::Block block = pool().acquire(bytes);
  if (block.memory == nullptr) {
    failed_ = true;
    return nullptr;
  }
  // Everything MPI may read, and every output whose image is copied back whole (a datatype's holes,
  // an output MPI reads too), starts as the device's contents: at once, or a persistent call's at
  // each start.
  const bool from_device = !output || fill || span == kWholeAllocation;
  staged_ = true;
  StagedImage& image = images_[count_++];
  image = {from, block.memory, bytes, block.capacity, output, from_device};
  if (kind_ != Kind::Persistent && from_device && !copy_in(image)) {
    failed_ = true;
  }
  return block.memory + (start - from);
}

int DeviceStaging::refuse_call() noexcept {
  release();
  const int code = refusal_code(Refusal::StagingFailed);
  if (comm_ != MPI_COMM_NULL) {
    PMPI_Comm_call_errhandler(comm_, code);
  }
  return code;
}

int DeviceStaging::finish_blocking(int rc) noexcept {
  bool copied = !failed_;
  if (rc == MPI_SUCCESS && copied) {
    for (int i = 0; i < count_; ++i) {
      copied = copy_back(images_[i]) && copied;
    }
  }
  release();
  return rc == MPI_SUCCESS && !copied ? MPI_ERR_OTHER : rc;
}

int DeviceStaging::finish_with_request(int rc, const MPI_Request* request) noexcept {
  if (rc != MPI_SUCCESS || failed_) {
    release();
    return rc == MPI_SUCCESS ? MPI_ERR_OTHER : rc;
  }
  StagedRequest staged{};
  std::copy(images_, images_ + count_, staged.images);
  staged.count = count_;
  staged.persistent = kind_ == Kind::Persistent;
  table().add(contract::handle_key(*request), staged);
  count_ = 0; // the table owns the images now
  return rc;
}

void DeviceStaging::release() noexcept {
  for (int i = 0; i < count_; ++i) {
    release_image(images_[i]);
  }
  count_ = 0;
}

bool DeviceStaging::dense(MPI_Datatype type) noexcept {
  MPI_Aint lower_bound = 0;
  MPI_Aint extent = 0;
  int size = 0;
  return PMPI_Type_get_true_extent(type, &lower_bound, &extent) == MPI_SUCCESS &&
         PMPI_Type_size(type, &size) == MPI_SUCCESS && lower_bound == 0 && extent == size;
}

std::uint64_t DeviceStaging::size_of(MPI_Datatype type) noexcept {
  int size = 0;
  return PMPI_Type_size(type, &size) == MPI_SUCCESS && size > 0 ? static_cast<std::uint64_t>(size) : 0;
}

std::uint64_t DeviceStaging::group_size() const noexcept {
  int inter = 0;
  int size = 0;
  if (comm_ == MPI_COMM_NULL || PMPI_Comm_test_inter(comm_, &inter) != MPI_SUCCESS) {
    return 0;
  }
  const int rc = inter != 0 ? PMPI_Comm_remote_size(comm_, &size) : PMPI_Comm_size(comm_, &size);
  return rc == MPI_SUCCESS && size > 0 ? static_cast<std::uint64_t>(size) : 0;
}

namespace staged_requests {

std::atomic<std::size_t> staged_count{0};

contract::RequestWork tracks(std::uint64_t key) noexcept {
  return any() ? table().tracks(key) : contract::RequestWork::None;
}

void starting(const MPI_Request* requests, int count) noexcept {
  for (int i = 0; i < count; ++i) {
    table().starting(contract::handle_key(requests[i]));
  }
}

int completed(std::uint64_t key) noexcept {
  return table().completed(key);
}

void freed(std::uint64_t key) noexcept {
  table().freed(key);
}

PinnedUsage release_all() noexcept {
  table().clear();
  pool().clear();
  const auto [peak, left] = pool().take_usage();
  return {peak, left};
}

} // namespace staged_requests

bool any_on_device(std::initializer_list<const void*> buffers) noexcept {
  return std::ranges::any_of(buffers, [](const void* buffer) {
    return buffer != nullptr && buffer != MPI_IN_PLACE && ops().on_device(buffer);
  });
}

namespace {

// One MPI error code per refusal, its string naming the reason (MPI_Error_string gives it).
int refusal_code(Refusal refusal) noexcept {
  static int codes[4] = {MPI_ERR_OTHER, MPI_ERR_OTHER, MPI_ERR_OTHER, MPI_ERR_OTHER};
  static std::once_flag made;
  std::call_once(made, [] {
    static const char* const kReasons[4] = {
        "commlens: one-sided communication on device memory needs a CUDA-aware MPI library: the "
        "runtime stages device buffers through host memory only where the data moves inside the call",
        "commlens: MPI-IO on device memory needs a CUDA-aware MPI library: copy the data to host "
        "memory first",
        "commlens: partitioned communication on device memory needs a CUDA-aware MPI library: the "
        "runtime cannot see when each partition is ready",
        "commlens: a device buffer could not be staged through host memory (pinned memory could not "
        "be allocated, or a copy failed): the call was not made"};
    int error_class = 0;
    if (PMPI_Add_error_class(&error_class) != MPI_SUCCESS) {
      return;
    }
    for (int i = 0; i < 4; ++i) {
      int code = 0;
      if (PMPI_Add_error_code(error_class, &code) == MPI_SUCCESS &&
          PMPI_Add_error_string(code, kReasons[i]) == MPI_SUCCESS) {
        codes[i] = code;
      }
    }
  });
  return codes[static_cast<int>(refusal)];
}

} // namespace

int refuse_on_communicator(MPI_Comm comm, Refusal refusal) noexcept {
  const int code = refusal_code(refusal);
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

int refuse_on_window(MPI_Win win, Refusal refusal) noexcept {
  const int code = refusal_code(refusal);
  PMPI_Win_call_errhandler(win, code);
  return code;
}

int refuse_on_file(MPI_File file, Refusal refusal) noexcept {
  const int code = refusal_code(refusal);
  PMPI_File_call_errhandler(file, code);
  return code;
}

} // namespace commlens::pmpi
