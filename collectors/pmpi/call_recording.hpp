#pragma once
// The one hand-written recording path every generated wrapper goes through: begin (ticks and call
// id), then after the PMPI call fill in communicator, peer, tag or root, bytes, buffer location and
// request, then record. Nothing here locks, allocates or touches SQLite.
//
// Byte accounting (the public meaning of bytes_sent / bytes_recv):
// - count x type size of the data the call sends and of the receive buffer it posts (not the size
//   of the message that arrived); v/w variants sum over the communicator size (the remote group of
//   an inter-communicator) or over the neighbour counts for neighbourhood collectives.
// - Rooted collectives: terms marked @root count at the root only, @nonroot elsewhere; on an
//   inter-communicator the root (MPI_ROOT) counts only its @root terms, the other group only the
//   rest, and MPI_PROC_NULL members count nothing.
// - MPI_IN_PLACE never changes the totals: the in-place side is counted with the count and type
//   the standard says describe the data in place (for example MPI_Allgather: recvcount x recvtype),
//   so a program that switches to MPI_IN_PLACE reports the same bytes.
// - MPI_PROC_NULL as destination or source: that side is zero bytes, the peer is kPeerProcNull.
// - Persistent requests: the *_init call moves nothing (zero bytes); each MPI_Start/Startall
//   carries the bytes of the requests it activates.
#include "buffer_location.hpp"
#include "commlens/profiler/profiler.hpp"
#include "communicator_registry.hpp"
#include "mpi_header.hpp"
#include "request_tracker.hpp"

#include <cstdint>

namespace commlens::pmpi {

enum class Side { Both, Root, NonRoot };

inline std::uint64_t count_of(long long count) noexcept {
  return count > 0 ? static_cast<std::uint64_t>(count) : 0;
}

class CallRecording {
public:
  CallRecording(Profiler& profiler, FunctionId function) noexcept;
  // A call timed where the collectors cannot take part (MPI_Init ran before the profiler existed,
  // MPI_Finalize ends after they stopped): no collector hooks, finish() is not called.
  CallRecording(Profiler& profiler, FunctionId function, std::uint64_t start_ticks,
                std::uint64_t end_ticks) noexcept;

  void finish() noexcept;
  // Stores the call unless collection is off (stateful wrappers run while it is off).
  void record() noexcept;

  Profiler& profiler() noexcept { return profiler_; }
  FunctionId function() const noexcept { return record_.function; }
  std::uint64_t call_id() const noexcept { return record_.call_id; }
  // What the call stores so far and the communicator it runs on (null: none), for collectors
  // that keep more about a call in tables of their own (collectors/nccl).
  const EventRecord& event() const noexcept { return record_; }
  const CommunicatorEntry* communicator() const noexcept { return entry_; }

  void set_communicator(MPI_Comm comm) noexcept;
  void set_communicator(const CommunicatorEntry* entry) noexcept;
  void set_window(MPI_Win win) noexcept { set_communicator(find_window(win)); }
  void set_file(MPI_File file) noexcept { set_communicator(find_file(file)); }
  void set_peer(int rank) noexcept;
  // source may be MPI_ANY_SOURCE, resolved from status when there is one (it stays unresolved for
  // a posted receive); a send peer set before wins unless it was MPI_PROC_NULL.
  void set_source(int source, const MPI_Status* status) noexcept;
  void set_tag(int tag) noexcept { record_.tag_or_root = tag; }
  void set_root(int root) noexcept;
  bool applies(Side side) const noexcept;

  int my_rank() const noexcept { return entry_ != nullptr ? entry_->local_rank : 0; }
  int group_size() const noexcept;
  int in_degree() noexcept;
  int out_degree() noexcept;
  // Also notes the first datatype a call's byte count uses (the sent data, else the received).
  std::uint64_t type_size(MPI_Datatype type) noexcept;
  template <typename Count> std::uint64_t sum(const Count* counts, int length) const noexcept {
    std::uint64_t total = 0;
    for (int i = 0; i < length; ++i) {
      total += count_of(counts[i]);
    }
    return total;
  }
  template <typename Count>
  std::uint64_t weighted_sum(const Count* counts, const MPI_Datatype* types, int length) noexcept {
    std::uint64_t total = 0;
    for (int i = 0; i < length; ++i) {
      total += count_of(counts[i]) == 0 ? 0 : count_of(counts[i]) * type_size(types[i]);
    }
    return total;
  }
  void add_sent(std::uint64_t bytes) noexcept { record_.bytes_sent += sends_to_null_ ? 0 : bytes; }
  void add_received(std::uint64_t bytes) noexcept { record_.bytes_recv += receives_from_null_ ? 0 : bytes; }
  void set_location(const void* buffer) noexcept { record_.location = buffer_location(buffer); }
  void set_implementation(std::uint8_t implementation) noexcept { record_.implementation = implementation; }

  void post_request(MPI_Request request, bool persistent) noexcept;
  void start_requests(const MPI_Request* requests, int count) noexcept;
  // A wait/test call saw the request under key complete.
  void complete_request(std::uint64_t key, const MPI_Status* status) noexcept;

private:
  enum class RootRole : std::uint8_t { None, Root, NonRoot, Idle };
  void describe(FunctionId function) noexcept;
  std::int32_t resolve_source(int source, const MPI_Status* status) const noexcept;
  void count_neighbours() noexcept;

  Profiler& profiler_;
  ThreadRecorder* recorder_;
  EventRecord record_;
  const CommunicatorEntry* entry_ = nullptr;
  MPI_Comm comm_ = MPI_COMM_NULL;
  RootRole root_role_ = RootRole::None;
  bool sends_to_null_ = false;
  bool receives_from_null_ = false;
  int completed_ = 0;
  int in_degree_ = -1;
  int out_degree_ = -1;
};

// Copies of the request handles a wait/test call gets, taken before PMPI nulls them: on the stack
// for small counts, in a reusable thread-local buffer beyond.
class RequestSnapshot {
public:
  // Inline: the wrappers of single-request calls (MPI_Wait, MPI_Test) fold it to one copy.
  RequestSnapshot(const MPI_Request* requests, int count) noexcept
      : keys_(on_stack_), count_(count > 0 ? count : 0) {
    if (count_ > kOnStack) [[unlikely]] {
      keys_ = spill(count_);
    }
    for (int i = 0; i < count_; ++i) {
      keys_[i] = requests[i] == MPI_REQUEST_NULL ? 0 : contract::handle_key(requests[i]);
    }
  }
  std::uint64_t key(int index) const noexcept { return keys_[index]; }
  int size() const noexcept { return count_; }

private:
  // A reusable thread-local buffer of at least count keys.
  static std::uint64_t* spill(int count) noexcept;
  static constexpr int kOnStack = 16;
  std::uint64_t on_stack_[kOnStack];
  std::uint64_t* keys_;
  int count_;
};

// The statuses a wait/test call fills: the user's array, or a local one when the user passed
// MPI_STATUSES_IGNORE (the source of MPI_ANY_SOURCE receives is needed either way).
class StatusArray {
public:
  StatusArray(MPI_Status* user_statuses, int count) noexcept;
  MPI_Status* data() noexcept { return statuses_; }

private:
  static constexpr int kOnStack = 16;
  MPI_Status on_stack_[kOnStack];
  MPI_Status* statuses_;
};

// Completion rules of the wait/test family; each records one completion per completed request.
// The single-request ones are inline: MPI_Test on a null or incomplete request records nothing.
inline void complete_wait(CallRecording& call, const RequestSnapshot& requests,
                          const MPI_Status* status) noexcept {
  if (requests.size() > 0 && requests.key(0) != 0) {
    call.complete_request(requests.key(0), status);
  }
}
inline void complete_test(CallRecording& call, const RequestSnapshot& requests, const int* flag,
                          const MPI_Status* status) noexcept {
  if (*flag) {
    complete_wait(call, requests, status);
  }
}
void complete_waitall(CallRecording& call, const RequestSnapshot& requests,
                      const MPI_Status* statuses) noexcept;
void complete_testall(CallRecording& call, const RequestSnapshot& requests, const int* flag,
                      const MPI_Status* statuses) noexcept;
void complete_waitany(CallRecording& call, const RequestSnapshot& requests, const int* index,
                      const MPI_Status* status) noexcept;
void complete_testany(CallRecording& call, const RequestSnapshot& requests, const int* index, const int* flag,
                      const MPI_Status* status) noexcept;
void complete_waitsome(CallRecording& call, const RequestSnapshot& requests, const int* outcount,
                       const int* indices, const MPI_Status* statuses) noexcept;
void complete_testsome(CallRecording& call, const RequestSnapshot& requests, const int* outcount,
                       const int* indices, const MPI_Status* statuses) noexcept;

inline void CallRecording::describe(FunctionId function) noexcept {
  record_.function = function;
  record_.kind = RecordKind::Call;
  record_.communicator_index = kNoCommunicator;
  record_.peer = kNoPeer;
  record_.tag_or_root = kNoTagOrRoot;
  record_.location = BufferLocation::Unknown;
  record_.call_id = recorder_ != nullptr ? recorder_->next_call_id() : 0;
}

inline CallRecording::CallRecording(Profiler& profiler, FunctionId function, std::uint64_t start_ticks,
                                    std::uint64_t end_ticks) noexcept
    : profiler_(profiler), recorder_(profiler.thread_recorder()), record_{} {
  describe(function);
  record_.start_ticks = start_ticks;
  record_.end_ticks = end_ticks;
  // No other thread is inside MPI during MPI_Init or MPI_Finalize: the rank's time in MPI is this.
  if (recorder_ != nullptr) {
    recorder_->note_rank_entered_mpi(start_ticks);
    recorder_->note_rank_left_mpi(end_ticks);
  }
}

inline CallRecording::CallRecording(Profiler& profiler, FunctionId function) noexcept
    : profiler_(profiler), recorder_(profiler.thread_recorder()), record_{} {
  describe(function);
#pragma GCC unroll contract::kCollectorSlots
  for (const contract::CollectorSlot& slot : contract::collector_hooks().slots) {
    if (slot.call_enter != nullptr) {
      slot.call_enter(record_.call_id, function);
    }
  }
  // A thread past the recorder limit records nothing, so it stays out of the count too.
  if (recorder_ != nullptr) {
    const InsideMpiCounter::Transition entry = profiler.inside_mpi().enter();
    record_.start_ticks = entry.ticks;
    if (entry.rank_idle) {
      recorder_->note_rank_entered_mpi(entry.ticks);
    }
  } else {
    record_.start_ticks = now_ticks();
  }
}

inline void CallRecording::finish() noexcept {
  if (recorder_ != nullptr) {
    const InsideMpiCounter::Transition exit = profiler_.inside_mpi().leave();
    record_.end_ticks = exit.ticks;
    if (exit.rank_idle) {
      recorder_->note_rank_left_mpi(exit.ticks);
    }
  } else {
    record_.end_ticks = now_ticks();
  }
  // Unrolled: a loop over the slots cost about 20 instructions a call even with no hook to run.
#pragma GCC unroll contract::kCollectorSlots
  for (const contract::CollectorSlot& slot : contract::collector_hooks().slots) {
    if (slot.call_exit != nullptr) {
      slot.call_exit(record_.call_id, record_.function, record_.end_ticks);
    }
  }
}

inline void CallRecording::record() noexcept {
  // A thread past the recorder limit has no recorder; its calls are counted by the profiler.
  if (recorder_ != nullptr && profiler_.collecting() && recorder_->record_call(record_, profiler_.phase())) {
    profiler_.wake_writer();
  }
}

} // namespace commlens::pmpi
