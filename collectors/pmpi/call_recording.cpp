#include "call_recording.hpp"

#include "datatype_catalog.hpp"

#include <vector>

namespace commlens::pmpi {

void CallRecording::set_communicator(MPI_Comm comm) noexcept {
  comm_ = comm;
  set_communicator(find_communicator(comm));
}

void CallRecording::set_communicator(const CommunicatorEntry* entry) noexcept {
  entry_ = entry;
  record_.communicator_index = entry != nullptr ? entry->index : kNoCommunicator;
}

void CallRecording::set_peer(int rank) noexcept {
  if (rank == MPI_PROC_NULL) {
    sends_to_null_ = true;
    record_.peer = kPeerProcNull;
    return;
  }
  record_.peer = entry_ != nullptr ? entry_->world_rank_of(rank) : kNoPeer;
}

std::int32_t CallRecording::resolve_source(int source, const MPI_Status* status) const noexcept {
  if (source == MPI_ANY_SOURCE && status != nullptr) {
    source = status->MPI_SOURCE;
  }
  if (source == MPI_PROC_NULL) {
    return kPeerProcNull;
  }
  if (source == MPI_ANY_SOURCE) {
    return kPeerAnySource;
  }
  return entry_ != nullptr ? entry_->world_rank_of(source) : kNoPeer;
}

void CallRecording::set_source(int source, const MPI_Status* status) noexcept {
  const std::int32_t peer = resolve_source(source, status);
  receives_from_null_ = peer == kPeerProcNull;
  if (record_.peer == kNoPeer || record_.peer == kPeerProcNull) {
    record_.peer = peer;
  }
}

void CallRecording::set_root(int root) noexcept {
  record_.tag_or_root = root;
  if (entry_ != nullptr && entry_->is_inter) {
    root_role_ = root == MPI_ROOT        ? RootRole::Root
                 : root == MPI_PROC_NULL ? RootRole::Idle
                                         : RootRole::NonRoot;
  } else {
    root_role_ = root == my_rank() ? RootRole::Root : RootRole::NonRoot;
  }
}

bool CallRecording::applies(Side side) const noexcept {
  const bool inter = entry_ != nullptr && entry_->is_inter;
  switch (root_role_) {
  case RootRole::None:
    return true;
  case RootRole::Idle:
    return false;
  case RootRole::Root:
    return inter ? side == Side::Root : side != Side::NonRoot;
  case RootRole::NonRoot:
    return side != Side::Root;
  }
  return false;
}

int CallRecording::group_size() const noexcept {
  if (entry_ != nullptr) {
    return entry_->group_size();
  }
  // A communicator the registry never saw (created by a call commlens does not wrap).
  int size = 0;
  int is_inter = 0;
  if (comm_ != MPI_COMM_NULL && PMPI_Comm_test_inter(comm_, &is_inter) == MPI_SUCCESS) {
    (is_inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(comm_, &size);
  }
  return size;
}

void CallRecording::count_neighbours() noexcept {
  in_degree_ = out_degree_ = 0;
  int topology = MPI_UNDEFINED;
  if (comm_ == MPI_COMM_NULL || PMPI_Topo_test(comm_, &topology) != MPI_SUCCESS) {
    return;
  }
  if (topology == MPI_CART) {
    int dimensions = 0;
    PMPI_Cartdim_get(comm_, &dimensions);
    in_degree_ = out_degree_ = 2 * dimensions;
  } else if (topology == MPI_GRAPH) {
    PMPI_Graph_neighbors_count(comm_, my_rank(), &in_degree_);
    out_degree_ = in_degree_;
  } else if (topology == MPI_DIST_GRAPH) {
    int weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm_, &in_degree_, &out_degree_, &weighted);
  }
}

int CallRecording::in_degree() noexcept {
  if (in_degree_ < 0) {
    count_neighbours();
  }
  return in_degree_;
}

int CallRecording::out_degree() noexcept {
  if (out_degree_ < 0) {
    count_neighbours();
  }
  return out_degree_;
}

std::uint64_t CallRecording::type_size(MPI_Datatype type) noexcept {
  // Predefined types, the common case, cost one table probe instead of a call into MPI.
  const PredefinedDatatype* predefined = find_predefined_datatype(type);
  if (record_.datatype == 0 && type != MPI_DATATYPE_NULL) {
    record_.datatype = predefined != nullptr ? predefined->index : derived_datatype_index();
  }
  if (predefined != nullptr) {
    return predefined->size;
  }
  MPI_Count size = 0;
  if (type == MPI_DATATYPE_NULL || PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0) {
    return 0; // MPI_UNDEFINED for types whose size overflows MPI_Count
  }
  return static_cast<std::uint64_t>(size);
}

void CallRecording::post_request(MPI_Request request, bool persistent) noexcept {
  record_.request_id = record_.call_id;
  TrackedRequest tracked{record_.call_id,  record_.start_ticks, record_.bytes_sent,  record_.bytes_recv,
                         entry_,           record_.peer,        record_.tag_or_root, record_.function,
                         record_.location, persistent,          !persistent};
  if (persistent) {
    record_.bytes_sent = record_.bytes_recv = 0; // nothing moves until MPI_Start
  }
  if (request != MPI_REQUEST_NULL) {
    // Persistent requests own their handle; others may share one (see HandleMap::add).
    RequestTracker& tracker = request_tracker();
    persistent ? tracker.insert(contract::handle_key(request), tracked)
               : tracker.add(contract::handle_key(request), tracked);
  }
}

void CallRecording::start_requests(const MPI_Request* requests, int count) noexcept {
  RequestTracker& tracker = request_tracker();
  for (int i = 0; i < count; ++i) {
    RequestTracker::Slot* slot = tracker.find(contract::handle_key(requests[i]));
    if (slot == nullptr) {
      continue;
    }
    TrackedRequest& tracked = slot->value;
    // Each activation gets its own id so that completions of one Startall stay distinct.
    tracked.request_id = i == 0 || recorder_ == nullptr ? record_.call_id : recorder_->next_call_id();
    tracked.post_ticks = record_.start_ticks;
    tracked.active = true;
    record_.bytes_sent += tracked.bytes_sent;
    record_.bytes_recv += tracked.bytes_recv;
    record_.request_id = count == 1 ? tracked.request_id : 0;
    if (count == 1) {
      record_.peer = tracked.peer;
      record_.communicator_index =
          tracked.communicator != nullptr ? tracked.communicator->index : kNoCommunicator;
    }
  }
}

void CallRecording::complete_request(std::uint64_t key, const MPI_Status* status) noexcept {
  RequestTracker& tracker = request_tracker();
  // The oldest active request under this handle: with shared handles, completions are taken
  // in posting order.
  RequestTracker::Slot* slot = tracker.find_first(key, [](const TrackedRequest& a, const TrackedRequest& b) {
    return a.active != b.active ? a.active : a.request_id < b.request_id;
  });
  if (slot == nullptr || !slot->value.active) {
    return; // posted while collection was off, or an inactive persistent request
  }
  TrackedRequest& tracked = slot->value;
  EventRecord completion{};
  completion.start_ticks = tracked.post_ticks;
  completion.end_ticks = record_.end_ticks;
  completion.call_id = record_.call_id;
  completion.bytes_sent = tracked.bytes_sent;
  completion.bytes_recv = tracked.bytes_recv;
  completion.request_id = tracked.request_id;
  completion.communicator_index =
      tracked.communicator != nullptr ? tracked.communicator->index : kNoCommunicator;
  completion.peer = tracked.peer;
  if (tracked.peer == kPeerAnySource && status != nullptr && tracked.communicator != nullptr) {
    completion.peer = tracked.communicator->world_rank_of(status->MPI_SOURCE);
  }
  completion.tag_or_root = tracked.tag_or_root;
  completion.function = tracked.function;
  completion.kind = RecordKind::RequestCompletion;
  completion.location = tracked.location;
  if (tracked.persistent) {
    tracked.active = false;
  } else {
    tracker.erase(slot);
  }
  record_.request_id = ++completed_ == 1 ? completion.request_id : 0;
  if (recorder_ != nullptr && profiler_.collecting() && recorder_->record_request_completion(completion)) {
    profiler_.wake_writer();
  }
}

std::uint64_t* RequestSnapshot::spill(int count) noexcept {
  thread_local std::vector<std::uint64_t> keys;
  if (keys.size() < static_cast<std::size_t>(count)) {
    keys.resize(count); // grows once to the largest count this thread uses
  }
  return keys.data();
}

StatusArray::StatusArray(MPI_Status* user_statuses, int count) noexcept : statuses_(user_statuses) {
  if (user_statuses != MPI_STATUSES_IGNORE) {
    return;
  }
  statuses_ = on_stack_;
  if (count > kOnStack) {
    thread_local std::vector<MPI_Status> spill;
    if (spill.size() < static_cast<std::size_t>(count)) {
      spill.resize(count);
    }
    statuses_ = spill.data();
  }
}

namespace {
void complete_at(CallRecording& call, const RequestSnapshot& requests, int index, const MPI_Status* status) {
  if (index >= 0 && index < requests.size() && requests.key(index) != 0) {
    call.complete_request(requests.key(index), status);
  }
}
} // namespace

void complete_waitall(CallRecording& call, const RequestSnapshot& requests,
                      const MPI_Status* statuses) noexcept {
  for (int i = 0; i < requests.size(); ++i) {
    complete_at(call, requests, i, &statuses[i]);
  }
}

void complete_testall(CallRecording& call, const RequestSnapshot& requests, const int* flag,
                      const MPI_Status* statuses) noexcept {
  if (*flag) {
    complete_waitall(call, requests, statuses);
  }
}

void complete_waitany(CallRecording& call, const RequestSnapshot& requests, const int* index,
                      const MPI_Status* status) noexcept {
  if (*index != MPI_UNDEFINED) {
    complete_at(call, requests, *index, status);
  }
}

void complete_testany(CallRecording& call, const RequestSnapshot& requests, const int* index, const int* flag,
                      const MPI_Status* status) noexcept {
  if (*flag) {
    complete_waitany(call, requests, index, status);
  }
}

void complete_waitsome(CallRecording& call, const RequestSnapshot& requests, const int* outcount,
                       const int* indices, const MPI_Status* statuses) noexcept {
  for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; ++i) {
    complete_at(call, requests, indices[i], &statuses[i]);
  }
}

void complete_testsome(CallRecording& call, const RequestSnapshot& requests, const int* outcount,
                       const int* indices, const MPI_Status* statuses) noexcept {
  complete_waitsome(call, requests, outcount, indices, statuses);
}

} // namespace commlens::pmpi
