#pragma once
// commlens' own records of what CUPTI reports. CUPTI's types stop at activity_records.cpp, which
// converts them; classification, storage and tests see only these.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace commlens::cuda {

enum class MemoryKind : std::uint8_t { Unknown, Pageable, Pinned, Device, Array, Managed };

// Pageable or pinned host memory.
constexpr bool is_host_memory(MemoryKind kind) noexcept {
  return kind == MemoryKind::Pageable || kind == MemoryKind::Pinned;
}
enum class CopyDirection : std::uint8_t {
  HtoD,
  DtoH,
  HtoA,
  AtoH,
  AtoA,
  AtoD,
  DtoA,
  DtoD,
  HtoH,
  PtoP,
  Unknown
};
enum class CopyPath : std::uint8_t { HostStaged, Peer, Ipc, SameDevice, Managed, HostToHost, Other };
enum class PeerLink : std::uint8_t { None, NvLink, Pcie };

struct CudaCopy {
  std::uint64_t start_ns = 0; // profiler clock (CLOCK_MONOTONIC scale)
  std::uint64_t end_ns = 0;
  std::uint32_t device = 0;
  std::uint32_t src_device = 0;
  std::uint32_t dst_device = 0;
  MemoryKind src_kind = MemoryKind::Unknown;
  MemoryKind dst_kind = MemoryKind::Unknown;
  std::uint64_t bytes = 0;
  std::uint32_t stream = 0;
  CopyDirection direction = CopyDirection::Unknown;
  std::uint32_t correlation_id = 0;         // the driver API call's (CUPTI's correlationId)
  std::uint32_t runtime_correlation_id = 0; // the runtime API call's, when it came through one
  bool managed_migration = false;           // a unified-memory page migration, not an explicit copy
  bool touches_ipc_mapping = false;
  std::uint64_t copies = 1; // copies this stands for: a run of them in summary mode (copy_runs.hpp)
};

struct CudaKernel {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::string name;
  std::uint32_t correlation_id = 0;
};

// A cudaMemset* / cuMemsetD* on the GPU.
struct CudaMemset {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::uint64_t bytes = 0;
  MemoryKind memory_kind = MemoryKind::Unknown;
  std::uint32_t value = 0;
  std::uint32_t correlation_id = 0;
};

// Which synchronisation API a thread waited in (CUPTI's synchronization records).
enum class SyncKind : std::uint8_t {
  Unknown,
  EventSynchronize,
  StreamWaitEvent,
  StreamSynchronize,
  ContextSynchronize
};

struct CudaSynchronization {
  std::uint64_t start_ns = 0; // when the API call began and returned: the time the thread waited
  std::uint64_t end_ns = 0;
  SyncKind kind = SyncKind::Unknown;
  std::uint32_t context = 0;
  std::optional<std::uint32_t> stream; // absent for context and event synchronisation
  std::optional<std::uint32_t> event;  // absent for context and stream synchronisation
  std::uint32_t correlation_id = 0;
};

struct NvtxRange {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::optional<std::string> domain;
  std::string name;
};

enum class ApiDomain : std::uint8_t { Runtime, Driver };

// A runtime or driver API call of the host (CUPTI's API records, for the functions
// api_record_selection.hpp selects).
struct CudaApiCall {
  std::uint64_t start_ns = 0; // when the call began and returned
  std::uint64_t end_ns = 0;
  ApiDomain domain = ApiDomain::Runtime;
  std::uint32_t callback_id = 0;    // CUPTI's id of the function within its domain
  std::uint32_t system_thread = 0;  // the calling thread's Linux thread id (gettid)
  std::uint32_t correlation_id = 0; // equal to that of the kernel, copy or memset it launched
};

// cuda_api_functions.id of a function: CUPTI's callback id, driver functions kDriverApiIds above
// the runtime's, so one integer names a function of either domain.
inline constexpr std::int64_t kDriverApiIds = 65536;
std::int64_t api_function_id(ApiDomain domain, std::uint32_t callback_id) noexcept;
// The name the program calls a function by. CUPTI's runtime names end in the version that added
// the function ("cudaLaunchKernel_v7000"), which is dropped; driver names are the symbols
// ("cuMemcpyHtoD_v2") and stay as they are.
std::string api_function_name(ApiDomain domain, std::string_view callback_name);

const char* memory_kind_name(MemoryKind kind) noexcept;
const char* copy_direction_name(CopyDirection direction) noexcept;
const char* copy_path_name(CopyPath path) noexcept;
const char* peer_link_name(PeerLink link) noexcept; // null for PeerLink::None
const char* sync_kind_name(SyncKind kind) noexcept;
const char* api_domain_name(ApiDomain domain) noexcept; // runtime, driver

} // namespace commlens::cuda
