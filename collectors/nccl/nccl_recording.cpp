// NCCL communicators, datatype sizes and group nesting for the generated wrappers (nccl_recording.hpp).
#include "nccl_recording.hpp"

#include "nccl_call_details.hpp"
#include "nccl_without_mpi.hpp"

#include "handle_map.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

namespace commlens::nccl {
namespace {

std::atomic<FunctionId> first_id{0};
thread_local int depth = 0;
thread_local int call_depth = 0;

// What each registered communicator keeps: the entry the wrappers record, and how many times it
// was split (the sequence number that tells its children apart).
struct NcclCommunicator {
  pmpi::CommunicatorEntry entry;
  std::atomic<std::uint32_t> splits{0};
};

struct Registry {
  contract::HandleMap<NcclCommunicator*> communicators{1u << 10};
  std::mutex creation; // registration only: creating an NCCL communicator costs milliseconds
  std::uint32_t created_here = 0;
};

Registry& registry() {
  static Registry* instance = new Registry; // never destroyed: calls may come during exit
  return *instance;
}

constexpr std::uint64_t kFnvOffset = 1469598103934665603ull, kFnvPrime = 1099511628211ull;

std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t hash = kFnvOffset) {
  const auto* byte = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    hash = (hash ^ byte[i]) * kFnvPrime;
  }
  return hash;
}

// Bit 62 set and bit 63 clear: positive, and above every MPI communicator id.
std::int64_t nccl_id(std::uint64_t hash) {
  return static_cast<std::int64_t>((hash & ((1ull << 62) - 1)) | (1ull << 62));
}

// The id every member of a split derives (nccl_recording.hpp).
std::int64_t split_id(std::int64_t parent_id, std::uint32_t sequence, int color) {
  std::uint64_t hash = fnv1a(&parent_id, sizeof parent_id);
  hash = fnv1a(&sequence, sizeof sequence, hash);
  return nccl_id(fnv1a(&color, sizeof color, hash));
}

// The next id of a communicator of this process alone (ncclCommInitAll); under the creation lock.
std::int64_t next_process_id(int run_rank) {
  const std::uint32_t counter = registry().created_here++;
  return nccl_id(fnv1a(&counter, sizeof counter, fnv1a(&run_rank, sizeof run_rank)));
}

NcclCommunicator* add_communicator(Profiler& profiler, FunctionId created_by, ncclComm_t comm,
                                   std::int64_t id, std::int64_t parent_id, std::uint64_t created_ns,
                                   CommunicatorShape shape) {
  if (comm == nullptr) {
    return nullptr;
  }
  auto* communicator = new NcclCommunicator; // kept for the process: records point to its entry
  communicator->entry.id = id;
  communicator->entry.local_rank = shape.rank;
  CommunicatorInfo info;
  info.id = id;
  info.parent_id = parent_id;
  info.created_by = created_by;
  info.local_rank = shape.rank;
  info.members.assign(static_cast<std::size_t>(shape.size), -1);
  if (shape.rank >= 0 && shape.rank < shape.size) {
    info.members[static_cast<std::size_t>(shape.rank)] = profiler.identity().run_rank;
  }
  // The calls' peer column then holds a run rank or -1 (unknown), never an NCCL rank that reports
  // would read as a run rank; nccl_calls keeps the NCCL rank, and the merged file maps it through
  // the members' communicators rows.
  communicator->entry.members = info.members;
  info.created_ns = created_ns;
  communicator->entry.index = profiler.communicators().add(std::move(info));
  registry().communicators.insert(contract::handle_key(comm), communicator);
  return communicator;
}

void add_communicator(pmpi::CallRecording& call, ncclComm_t comm, std::int64_t id, std::int64_t parent_id) {
  Profiler& profiler = call.profiler();
  if (const NcclCommunicator* communicator =
          add_communicator(profiler, call.function(), comm, id, parent_id, profiler.clock().now_ns(),
                           communicator_shape(comm))) {
    call.set_communicator(&communicator->entry);
  }
}

NcclCommunicator* find(ncclComm_t comm) noexcept {
  auto* slot = registry().communicators.find(contract::handle_key(comm));
  return slot != nullptr ? slot->value : nullptr;
}

} // namespace

FunctionId first_function_id() noexcept {
  return first_id.load(std::memory_order_acquire);
}

std::uint64_t type_size(ncclDataType_t datatype) noexcept {
  // ncclInt8, Uint8, Int32, Uint32, Int64, Uint64, Float16, Float32, Float64, Bfloat16, Float8e4m3,
  // Float8e5m2: NCCL's enum values 0 to 11.
  static constexpr std::array<std::uint8_t, 12> kSizes = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return datatype >= 0 && datatype < static_cast<int>(kSizes.size())
             ? kSizes[static_cast<std::size_t>(datatype)]
             : 0;
}

bool inside_nccl_call() noexcept {
  return call_depth > 0;
}
NcclCallScope::NcclCallScope() noexcept {
  ++call_depth;
}
NcclCallScope::~NcclCallScope() {
  --call_depth;
}

int group_depth() noexcept {
  return depth;
}
void enter_group() noexcept {
  ++depth;
}
void leave_group() noexcept {
  depth = depth > 0 ? depth - 1 : 0;
}

const pmpi::CommunicatorEntry* find_communicator(ncclComm_t comm) noexcept {
  const NcclCommunicator* communicator = find(comm);
  return communicator != nullptr ? &communicator->entry : nullptr;
}

void register_from_unique_id(pmpi::CallRecording& call, ncclComm_t comm, const ncclUniqueId& unique_id) {
  const std::lock_guard lock(registry().creation);
  add_communicator(call, comm, unique_id_communicator(unique_id), -1);
}

CommunicatorShape communicator_shape(ncclComm_t comm) {
  static RealFunction<ncclResult_t (*)(ncclComm_t, int*)> user_rank{"ncclCommUserRank"};
  static RealFunction<ncclResult_t (*)(ncclComm_t, int*)> count{"ncclCommCount"};
  CommunicatorShape answer;
  const auto rank_of = user_rank.get();
  const auto size_of = count.get();
  if (rank_of == nullptr || size_of == nullptr || rank_of(comm, &answer.rank) != kNcclSuccess ||
      size_of(comm, &answer.size) != kNcclSuccess || answer.size <= 0) {
    return {}; // an NCCL without the queries: a communicator of this process alone
  }
  return answer;
}

std::int64_t unique_id_communicator(const ncclUniqueId& unique_id) noexcept {
  return nccl_id(fnv1a(&unique_id, sizeof unique_id));
}

std::int64_t register_early(Profiler& profiler, const EarlyCommunicator& early, std::int64_t parent_id,
                            std::uint64_t created_ns, std::uint64_t destroyed_ns) {
  const std::lock_guard lock(registry().creation);
  std::int64_t id = early.unique_id;
  if (early.origin == EarlyCommunicator::Origin::Split) {
    if (parent_id < 0) {
      return -1; // a parent the collector never saw
    }
    id = split_id(parent_id, early.sequence, early.color);
  } else {
    parent_id = -1;
    if (early.origin == EarlyCommunicator::Origin::All) {
      id = next_process_id(profiler.identity().run_rank);
    }
  }
  NcclCommunicator* communicator = add_communicator(
      profiler, static_cast<FunctionId>(first_function_id() + early.creator), early.comm, id, parent_id,
      created_ns, destroyed_ns != 0 ? early.shape : communicator_shape(early.comm));
  if (communicator == nullptr) {
    return -1;
  }
  communicator->splits.store(early.splits, std::memory_order_relaxed);
  if (destroyed_ns != 0) {
    // Freed at once: NCCL may have given its handle to a communicator created after it.
    profiler.communicators().mark_freed(communicator->entry.index, destroyed_ns);
    if (auto* slot = registry().communicators.find(contract::handle_key(early.comm))) {
      registry().communicators.erase(slot);
    }
  }
  return id;
}

void register_split(pmpi::CallRecording& call, ncclComm_t newcomm, ncclComm_t parent, int color) {
  NcclCommunicator* from = find(parent);
  if (from == nullptr) {
    return; // a parent the collector never saw: its children stay unknown too
  }
  // Every member of the parent calls ncclCommSplit, also those that get no communicator.
  const std::uint32_t sequence = from->splits.fetch_add(1, std::memory_order_relaxed);
  if (newcomm == nullptr) {
    return;
  }
  const std::lock_guard lock(registry().creation);
  add_communicator(call, newcomm, split_id(from->entry.id, sequence, color), from->entry.id);
}

void register_all(pmpi::CallRecording& call, const ncclComm_t* comms, int count) {
  const std::lock_guard lock(registry().creation);
  const int run_rank = call.profiler().identity().run_rank;
  for (int i = 0; i < count; ++i) {
    add_communicator(call, comms[i], next_process_id(run_rank), -1);
  }
}

void forget_communicator(ncclComm_t comm) {
  auto* slot = registry().communicators.find(contract::handle_key(comm));
  if (slot == nullptr) {
    return;
  }
  Profiler* profiler = Profiler::active();
  if (profiler != nullptr) {
    profiler->communicators().mark_freed(slot->value->entry.index, profiler->clock().now_ns());
  }
  registry().communicators.erase(slot);
}

void finish_nccl_collector() {
  if (Profiler* profiler = Profiler::active()) {
    flush_call_details(*profiler);
  }
}

void start_nccl_collector(Profiler& profiler, std::span<const FunctionDescription> functions) {
  const char* first_name = nccl_function_descriptions().front().name;
  for (std::size_t id = 0; id < functions.size(); ++id) {
    if (std::strcmp(functions[id].name, first_name) == 0) {
      first_id.store(static_cast<FunctionId>(id), std::memory_order_release);
      adopt_early_communicators(profiler);
      return;
    }
  }
}

} // namespace commlens::nccl
