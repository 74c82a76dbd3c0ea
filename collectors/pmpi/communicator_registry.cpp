#include "communicator_registry.hpp"

#include "collector_hooks.hpp"

#include "call_recording.hpp"
#include "handle_map.hpp"

#include <atomic>
#include <memory>

namespace commlens::pmpi {

namespace {

using EntryMap = contract::HandleMap<const CommunicatorEntry*>;

struct Registry {
  Profiler* profiler = nullptr;
  MPI_Comm world = MPI_COMM_NULL;
  MPI_Comm self = MPI_COMM_NULL;
  const CommunicatorEntry* world_entry = nullptr;
  const CommunicatorEntry* self_entry = nullptr;
  std::atomic<std::uint32_t> creation_counter{2};
  EntryMap communicators{1u << 12};
  EntryMap windows{1u << 10};
  EntryMap files{1u << 10};
  EntryMap messages{1u << 10};
};
std::unique_ptr<Registry> registry;

// Run ranks (ProcessIdentity::run_rank) of a group's members; -1 for members outside this job's
// MPI_COMM_WORLD (the other side of a spawn or connect), whose run ranks this process cannot know.
std::vector<int> world_ranks_of(MPI_Group group) {
  const ProcessIdentity& identity = registry->profiler->identity();
  const int first_rank = identity.run_rank - identity.world_rank;
  MPI_Group world_group = MPI_GROUP_NULL;
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> ranks(size);
  std::vector<int> world_ranks(size);
  for (int i = 0; i < size; ++i) {
    ranks[i] = i;
  }
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  PMPI_Group_translate_ranks(group, size, ranks.data(), world_group, world_ranks.data());
  PMPI_Group_free(&world_group);
  for (int& rank : world_ranks) {
    rank = rank == MPI_UNDEFINED ? -1 : first_rank + rank;
  }
  return world_ranks;
}

void describe_groups(MPI_Comm comm, CommunicatorEntry& entry) {
  int is_inter = 0;
  PMPI_Comm_test_inter(comm, &is_inter);
  entry.is_inter = is_inter != 0;
  PMPI_Comm_rank(comm, &entry.local_rank);
  MPI_Group group = MPI_GROUP_NULL;
  PMPI_Comm_group(comm, &group);
  entry.members = world_ranks_of(group);
  PMPI_Group_free(&group);
  if (entry.is_inter) {
    PMPI_Comm_remote_group(comm, &group);
    entry.remote_members = world_ranks_of(group);
    PMPI_Group_free(&group);
  }
}

// Every member takes a number from its own counter; the leader's (rank 0's) wins. An
// inter-communicator has no single rank 0, so its two groups agree through a merged copy.
std::int64_t agree_on_id(MPI_Comm comm) {
  std::int64_t proposal[2] = {registry->profiler->identity().run_rank,
                              registry->creation_counter.fetch_add(1, std::memory_order_relaxed)};
  int is_inter = 0;
  PMPI_Comm_test_inter(comm, &is_inter);
  if (is_inter) {
    MPI_Comm merged = MPI_COMM_NULL;
    PMPI_Intercomm_merge(comm, 0, &merged);
    PMPI_Bcast(proposal, 2, MPI_INT64_T, 0, merged);
    PMPI_Comm_free(&merged);
  } else {
    PMPI_Bcast(proposal, 2, MPI_INT64_T, 0, comm);
  }
  return (proposal[0] << 32) + proposal[1];
}

const CommunicatorEntry* publish(MPI_Comm comm, CommunicatorEntry* entry, CommunicatorInfo info) {
  info.id = entry->id;
  info.is_inter = entry->is_inter;
  info.local_rank = entry->local_rank;
  info.members = entry->members;
  info.remote_members = entry->remote_members;
  info.created_ns = registry->profiler->clock().now_ns(); // the scale of every stored time
  entry->index = registry->profiler->communicators().add(std::move(info));
  registry->communicators.insert(contract::handle_key(comm), entry);
  return entry;
}

void announce_created(MPI_Comm comm, std::int64_t id) {
  for (const contract::CollectorSlot& slot : contract::collector_hooks().slots) {
    if (slot.communicator_created != nullptr) {
      slot.communicator_created(comm, id);
    }
  }
}

const CommunicatorEntry* find_in(EntryMap& map, std::uint64_t key) noexcept {
  EntryMap::Slot* slot = map.find(key);
  return slot != nullptr ? slot->value : nullptr;
}

const CommunicatorEntry* take_from(EntryMap& map, std::uint64_t key) noexcept {
  EntryMap::Slot* slot = map.find(key);
  if (slot == nullptr) {
    return nullptr;
  }
  const CommunicatorEntry* entry = slot->value;
  map.erase(slot);
  return entry;
}

} // namespace

void start_communicator_registry(Profiler& profiler) {
  registry = std::make_unique<Registry>();
  registry->profiler = &profiler;
  registry->world = MPI_COMM_WORLD;
  registry->self = MPI_COMM_SELF;
  const std::int64_t run_rank = profiler.identity().run_rank;
  const std::int64_t first_rank = run_rank - profiler.identity().world_rank;
  for (MPI_Comm comm : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    auto* entry = new CommunicatorEntry{}; // lives as long as the process
    describe_groups(comm, *entry);
    entry->id = comm == MPI_COMM_WORLD ? first_rank << 32 : (run_rank << 32) + 1;
    CommunicatorInfo info;
    info.name = comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF";
    (comm == MPI_COMM_WORLD ? registry->world_entry : registry->self_entry) =
        publish(comm, entry, std::move(info));
  }
}

const CommunicatorEntry* find_communicator(MPI_Comm comm) noexcept {
  if (comm == registry->world) {
    return registry->world_entry;
  }
  if (comm == registry->self) {
    return registry->self_entry;
  }
  return find_in(registry->communicators, contract::handle_key(comm));
}

void register_communicator(CallRecording& call, MPI_Comm newcomm, MPI_Comm parent, bool not_usable_yet) {
  if (newcomm == MPI_COMM_NULL) {
    return; // this process is not a member (MPI_Comm_split with MPI_UNDEFINED and the like)
  }
  const CommunicatorEntry* parent_entry = find_communicator(parent);
  auto* entry = new CommunicatorEntry{};
  if (not_usable_yet && parent_entry != nullptr) {
    // A duplicate has the parent's groups; agree over the parent, whose collectives every member
    // issues in the same order, instead of over a communicator that cannot be used yet.
    *entry = *parent_entry;
    entry->id = agree_on_id(parent);
  } else {
    describe_groups(newcomm, *entry);
    entry->id = agree_on_id(newcomm);
  }
  CommunicatorInfo info;
  info.parent_id = parent_entry != nullptr ? parent_entry->id : -1;
  info.created_by = call.function();
  publish(newcomm, entry, std::move(info));
  announce_created(newcomm, entry->id);
}

void register_joined_communicator(FunctionId created_by, MPI_Comm intercomm, MPI_Comm this_side) {
  if (intercomm == MPI_COMM_NULL) {
    return;
  }
  auto* entry = new CommunicatorEntry{};
  describe_groups(intercomm, *entry);
  entry->id = agree_on_id(this_side);
  CommunicatorInfo info;
  info.parent_id = -1;
  info.created_by = created_by;
  publish(intercomm, entry, std::move(info));
  announce_created(intercomm, entry->id);
}

void forget_communicator(CallRecording& call, MPI_Comm comm) {
  call.set_communicator(comm);
  for (const contract::CollectorSlot& slot : contract::collector_hooks().slots) {
    if (slot.communicator_freed != nullptr) {
      slot.communicator_freed(comm);
    }
  }
  EntryMap::Slot* slot = registry->communicators.find(contract::handle_key(comm));
  if (slot != nullptr) {
    registry->profiler->communicators().mark_freed(slot->value->index, registry->profiler->clock().now_ns());
    registry->communicators.erase(slot);
  }
}

void name_communicator(MPI_Comm comm, const char* name) {
  if (const CommunicatorEntry* entry = find_communicator(comm); entry != nullptr && name != nullptr) {
    registry->profiler->communicators().set_name(entry->index, name);
  }
}

void register_window(MPI_Win win, MPI_Comm comm) {
  registry->windows.insert(contract::handle_key(win), find_communicator(comm));
}

void forget_window(CallRecording& call, MPI_Win win) {
  call.set_communicator(take_from(registry->windows, contract::handle_key(win)));
}

const CommunicatorEntry* find_window(MPI_Win win) noexcept {
  return find_in(registry->windows, contract::handle_key(win));
}

void register_file(MPI_File file, MPI_Comm comm) {
  registry->files.insert(contract::handle_key(file), find_communicator(comm));
}

void forget_file(CallRecording& call, MPI_File file) {
  call.set_communicator(take_from(registry->files, contract::handle_key(file)));
}

const CommunicatorEntry* find_file(MPI_File file) noexcept {
  return find_in(registry->files, contract::handle_key(file));
}

void remember_message(MPI_Message message, MPI_Comm comm) {
  if (message != MPI_MESSAGE_NULL && message != MPI_MESSAGE_NO_PROC) {
    registry->messages.insert(contract::handle_key(message), find_communicator(comm));
  }
}

const CommunicatorEntry* take_message(MPI_Message* message) noexcept {
  return take_from(registry->messages, contract::handle_key(*message));
}

} // namespace commlens::pmpi
