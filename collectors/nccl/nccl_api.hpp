#pragma once
// The few NCCL types the wrappers need, declared here instead of taken from nccl.h so that
// libcommlens.so builds (and intercepts NCCL) without CUDA: NCCL's ABI passes them as an opaque
// pointer, C enums (int), the CUDA stream (a pointer) and a 128-byte struct by value.
#include <atomic>
#include <cstddef>

extern "C" {
using ncclResult_t = int;
using ncclComm_t = struct ncclComm*;
using ncclDataType_t = int;
using ncclRedOp_t = int;
using cudaStream_t = void*;
using ncclConfig_t = void; // only passed on by pointer
struct ncclUniqueId {
  char internal[128];
};
}

namespace commlens::nccl {

inline constexpr ncclResult_t kNcclSuccess = 0;
inline constexpr ncclResult_t kNcclSystemError = 2; // what a wrapper returns when no NCCL is loaded
inline constexpr ncclResult_t kNcclInProgress = 7;  // a nonblocking communicator still initialising

// The address of NCCL's own `name`: the next definition after libcommlens.so (NCCL linked by the
// program or preloaded after it), else the one in a libnccl.so.2 already loaded with RTLD_LOCAL
// (a dlopen'ed framework library that depends on NCCL: its symbols are not global). Null when
// neither has it.
void* find_nccl_function(const char* name) noexcept;
// A wrapper called with no NCCL to pass the call to: says so and returns kNcclSystemError.
ncclResult_t report_missing(const char* name) noexcept;

// One NCCL entry point, looked up on first use and kept (a lookup that failed is retried, since
// NCCL may be loaded later).
template <typename Function> class RealFunction {
public:
  explicit constexpr RealFunction(const char* name) noexcept : name_(name) {}
  Function get() noexcept {
    Function function = function_.load(std::memory_order_acquire);
    if (function == nullptr) [[unlikely]] {
      function = reinterpret_cast<Function>(find_nccl_function(name_));
      function_.store(function, std::memory_order_release);
    }
    return function;
  }

private:
  const char* name_;
  std::atomic<Function> function_{nullptr};
};

} // namespace commlens::nccl
