#include "point_to_point/probed_messages.hpp"

#include "handle_map.hpp"

#include <algorithm>
#include <type_traits>

namespace commlens::runtime {

namespace {

std::uint64_t status_bytes(const MPI_Status& status) {
  MPI_Count bytes = 0;
  PMPI_Get_elements_x(&status, MPI_BYTE, &bytes);
  return bytes > 0 ? static_cast<std::uint64_t>(bytes) : 0;
}

// A message handle MPI never hands out. Open MPI's handles are pointers: the kept message's own
// address. MPICH's are integers whose top two bits give the kind, 00 meaning invalid; the only
// such message handle MPICH has is MPI_MESSAGE_NULL (0x2c000000), above every 24-bit number.
template <typename Handle> Handle handle_for(const ProbedMessage* message, std::uint64_t number) {
  if constexpr (std::is_pointer_v<Handle>) {
    return reinterpret_cast<Handle>(const_cast<ProbedMessage*>(message));
  } else {
    return static_cast<Handle>(1 + number % 0xffffff);
  }
}

} // namespace

bool ProbedMessage::matches(int source_wanted, int tag_wanted, MPI_Comm in) const noexcept {
  return in == comm && (source_wanted == MPI_ANY_SOURCE || source_wanted == source) &&
         (tag_wanted == MPI_ANY_TAG || tag_wanted == tag);
}

void ProbedMessage::report(MPI_Status* status) const {
  status->MPI_SOURCE = source;
  status->MPI_TAG = tag;
  status->MPI_ERROR = MPI_SUCCESS;
  PMPI_Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(bytes));
  PMPI_Status_set_cancelled(status, 0);
}

ProbedMessages::ProbedMessages(RecogniseHeader recognise, std::size_t header_bytes,
                               MaySendHeaders may_send_headers)
    : recognise_(std::move(recognise)), header_bytes_(header_bytes),
      may_send_headers_(std::move(may_send_headers)) {}

bool ProbedMessages::may_be_header(const MPI_Status& status, MPI_Comm comm) const {
  return status.MPI_SOURCE != MPI_PROC_NULL && status_bytes(status) == header_bytes_ &&
         may_send_headers_(comm, status.MPI_SOURCE);
}

// A message of a header's size, as bytes; a header is told by its contents.
int ProbedMessages::receive(MPI_Message* message, const MPI_Status& status, MPI_Comm comm,
                            ProbedMessage* received) const {
  received->comm = comm;
  received->source = status.MPI_SOURCE;
  received->tag = status.MPI_TAG;
  const std::uint64_t bytes = status_bytes(status);
  received->contents.resize(bytes);
  MPI_Status ignored;
  const int rc = PMPI_Mrecv(received->contents.data(), static_cast<int>(bytes), MPI_BYTE, message, &ignored);
  const std::optional<std::uint64_t> data =
      bytes == header_bytes_ ? recognise_(received->contents) : std::nullopt;
  received->rendezvous = data.has_value();
  received->bytes = data.value_or(bytes);
  return rc;
}

// Keeps the messages from `source`, oldest first, through the first one with `tag`: the one a
// probe of (source, tag) just saw, and every older one a later receive might have to get before
// it. Those of a header's size are received to see what they are; the others stay in MPI.
int ProbedMessages::keep_through(int source, int tag, MPI_Comm comm) {
  for (;;) {
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    int rc = PMPI_Mprobe(source, MPI_ANY_TAG, comm, &message, &status);
    if (rc != MPI_SUCCESS) {
      return rc;
    }
    ProbedMessage kept{comm, status.MPI_SOURCE, status.MPI_TAG, {}, false, status_bytes(status), message};
    if (may_be_header(status, comm)) {
      kept.in_mpi = MPI_MESSAGE_NULL;
      rc = receive(&message, status, comm, &kept);
      if (rc != MPI_SUCCESS) {
        return rc;
      }
    }
    const bool seen = kept.tag == tag;
    keep(std::move(kept));
    if (seen) {
      return MPI_SUCCESS;
    }
  }
}

std::deque<ProbedMessage>::iterator ProbedMessages::first_kept_locked(int source, int tag, MPI_Comm comm) {
  return std::ranges::find_if(kept_,
                              [&](const ProbedMessage& kept) { return kept.matches(source, tag, comm); });
}

bool ProbedMessages::report_kept(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (kept_count_.load(std::memory_order_relaxed) == 0) {
    return false;
  }
  std::lock_guard lock(mutex_);
  const auto found = first_kept_locked(source, tag, comm);
  if (found == kept_.end()) {
    return false;
  }
  found->report(status);
  return true;
}

int ProbedMessages::probe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (report_kept(source, tag, comm, status)) {
    if (flag != nullptr) {
      *flag = 1;
    }
    return MPI_SUCCESS;
  }
  const int rc =
      flag == nullptr ? PMPI_Probe(source, tag, comm, status) : PMPI_Iprobe(source, tag, comm, flag, status);
  if (rc != MPI_SUCCESS || (flag != nullptr && *flag == 0) || !may_be_header(*status, comm)) {
    return rc;
  }
  const int kept = keep_through(status->MPI_SOURCE, status->MPI_TAG, comm);
  if (kept == MPI_SUCCESS) {
    report_kept(source, tag, comm, status); // the message just kept, or an older one of its sender
  }
  return kept;
}

int ProbedMessages::mprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                           MPI_Status* status) {
  if (std::optional<ProbedMessage> kept = take(source, tag, comm)) {
    kept->report(status);
    if (kept->received()) {
      *message = hand_out(std::move(*kept));
    } else {
      *message = kept->in_mpi;
      note_handle(*message, comm);
    }
    if (flag != nullptr) {
      *flag = 1;
    }
    return MPI_SUCCESS;
  }
  int rc = flag == nullptr ? PMPI_Mprobe(source, tag, comm, message, status)
                           : PMPI_Improbe(source, tag, comm, flag, message, status);
  if (rc != MPI_SUCCESS || (flag != nullptr && *flag == 0) || *message == MPI_MESSAGE_NO_PROC) {
    return rc;
  }
  if (!may_be_header(*status, comm)) {
    note_handle(*message, comm);
    return rc;
  }
  ProbedMessage probed;
  rc = receive(message, *status, comm, &probed);
  if (rc == MPI_SUCCESS) {
    probed.report(status);
    *message = hand_out(std::move(probed));
  }
  return rc;
}

std::optional<ProbedMessage> ProbedMessages::take(int source, int tag, MPI_Comm comm) {
  if (kept_count_.load(std::memory_order_relaxed) == 0) {
    return std::nullopt;
  }
  std::lock_guard lock(mutex_);
  const auto found = first_kept_locked(source, tag, comm);
  if (found == kept_.end()) {
    return std::nullopt;
  }
  ProbedMessage taken = std::move(*found);
  kept_.erase(found);
  --kept_count_;
  return taken;
}

RedeemedMessage ProbedMessages::redeem(MPI_Message* message) {
  if (handed_out_count_.load(std::memory_order_relaxed) == 0) {
    return {};
  }
  std::lock_guard lock(mutex_);
  const auto found = handed_out_.find(contract::handle_key(*message));
  if (found == handed_out_.end()) {
    return {};
  }
  RedeemedMessage redeemed{found->second.comm, {}};
  if (found->second.message) {
    redeemed.message = std::move(*found->second.message);
    *message = MPI_MESSAGE_NULL;
  }
  handed_out_.erase(found);
  --handed_out_count_;
  return redeemed;
}

void ProbedMessages::forget(MPI_Comm comm) {
  std::lock_guard lock(mutex_);
  kept_count_ -= static_cast<std::size_t>(
      std::erase_if(kept_, [comm](const ProbedMessage& kept) { return kept.comm == comm; }));
  handed_out_count_ -= static_cast<std::size_t>(
      std::erase_if(handed_out_, [comm](const auto& entry) { return entry.second.comm == comm; }));
}

void ProbedMessages::keep(ProbedMessage message) {
  std::lock_guard lock(mutex_);
  kept_.push_back(std::move(message));
  ++kept_count_;
}

MPI_Message ProbedMessages::hand_out(ProbedMessage message) {
  auto owned = std::make_unique<ProbedMessage>(std::move(message));
  std::lock_guard lock(mutex_);
  const MPI_Message handle = handle_for<MPI_Message>(owned.get(), ++handles_made_);
  const MPI_Comm comm = owned->comm;
  handed_out_[contract::handle_key(handle)] = {comm, std::move(owned)};
  ++handed_out_count_;
  return handle;
}

// MPI's own handles are noted with their communicator, which MPI_Mrecv does not name but a staged
// receive reports its errors to.
void ProbedMessages::note_handle(MPI_Message handle, MPI_Comm comm) {
  std::lock_guard lock(mutex_);
  if (handed_out_.insert_or_assign(contract::handle_key(handle), HandedOut{comm, nullptr}).second) {
    ++handed_out_count_;
  }
}

} // namespace commlens::runtime
