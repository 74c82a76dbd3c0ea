#pragma once
// Probes under the point-to-point runtime. A rendezvous header travels in place of a device
// message (rendezvous_protocol.hpp), so MPI alone would report the header's size to MPI_Probe,
// MPI_Iprobe, MPI_Mprobe and MPI_Improbe. A probe that matches a message of a header's size
// therefore receives it to see what it is, and reports the data's size for a header:
// - MPI_Mprobe and MPI_Improbe have taken the message out of MPI's matching already: it is
//   received through its MPI_Message, and a message handle of the runtime's own is handed out in
//   its place, which MPI_Mrecv and MPI_Imrecv redeem.
// - MPI_Probe and MPI_Iprobe leave the message to a later receive, so the process keeps it. MPI
//   delivers messages from one sender in the order sent, so every older message from that sender
//   (other tags) is kept too, and every receive and probe of the process looks among the kept
//   messages before it asks MPI. An older message that cannot be a header stays in MPI, taken out
//   of matching by MPI_Mprobe: a receive gets it through that handle, with its own datatype.
// Which senders may send headers (ranks of this node) and which bytes are one is the caller's to
// say; the rest needs no GPU and is tested on the host.
#include "mpi_header.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace commlens::runtime {

// A message a probe received on the user's behalf.
struct ProbedMessage {
  MPI_Comm comm = MPI_COMM_NULL;
  int source = MPI_ANY_SOURCE;
  int tag = MPI_ANY_TAG;
  std::vector<unsigned char> contents; // as sent (MPI_BYTE): a rendezvous header, or the message
  bool rendezvous = false;
  std::uint64_t bytes = 0; // what a receive gets: for a header the data's size, else the message's
  // A message still in MPI (contents empty): receive it with MPI_Mrecv/MPI_Imrecv on this handle.
  MPI_Message in_mpi = MPI_MESSAGE_NULL;

  bool received() const noexcept { return in_mpi == MPI_MESSAGE_NULL; }
  bool matches(int source_wanted, int tag_wanted, MPI_Comm in) const noexcept;
  // The status a probe or receive of the whole message reports.
  void report(MPI_Status* status) const;
};

// What MPI_Mrecv or MPI_Imrecv gets for its message handle.
struct RedeemedMessage {
  MPI_Comm comm = MPI_COMM_NULL;        // the message's communicator; null for a handle never seen
  std::optional<ProbedMessage> message; // the message, when the handle is the runtime's own
};

class ProbedMessages {
public:
  // The data's size when `contents` is a rendezvous header; nullopt for any other message.
  using RecogniseHeader = std::function<std::optional<std::uint64_t>(std::span<const unsigned char>)>;
  // Whether `source` of comm may send headers at all; messages from others are left to MPI.
  using MaySendHeaders = std::function<bool(MPI_Comm comm, int source)>;
  ProbedMessages(RecogniseHeader recognise, std::size_t header_bytes, MaySendHeaders may_send_headers);

  // MPI_Probe (flag null) and MPI_Iprobe.
  int probe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
  // MPI_Mprobe (flag null) and MPI_Improbe. A kept message still in MPI comes back as MPI's handle.
  int mprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status);
  // The kept message a receive of (source, tag, comm) matches first, taken out (one still in MPI
  // is the caller's to receive through in_mpi); nullopt: the receive is MPI's.
  std::optional<ProbedMessage> take(int source, int tag, MPI_Comm comm);
  // What a handle mprobe returned stands for; for the runtime's own handles *message becomes
  // MPI_MESSAGE_NULL, as MPI_Mrecv leaves it.
  RedeemedMessage redeem(MPI_Message* message);
  // MPI_Comm_free: what was kept for the communicator cannot be received any more.
  void forget(MPI_Comm comm);

private:
  struct HandedOut {
    MPI_Comm comm;
    std::unique_ptr<ProbedMessage> message; // null: one of MPI's handles
  };

  int receive(MPI_Message* message, const MPI_Status& status, MPI_Comm comm, ProbedMessage* received) const;
  int keep_through(int source, int tag, MPI_Comm comm);
  void keep(ProbedMessage message);
  bool report_kept(int source, int tag, MPI_Comm comm, MPI_Status* status);
  // The oldest kept message a receive or probe of (source, tag, comm) matches; kept_.end() if none.
  std::deque<ProbedMessage>::iterator first_kept_locked(int source, int tag, MPI_Comm comm);
  MPI_Message hand_out(ProbedMessage message);
  void note_handle(MPI_Message handle, MPI_Comm comm);
  bool may_be_header(const MPI_Status& status, MPI_Comm comm) const;

  RecogniseHeader recognise_;
  std::size_t header_bytes_;
  MaySendHeaders may_send_headers_;
  std::mutex mutex_;
  std::deque<ProbedMessage> kept_;                          // in the order received
  std::unordered_map<std::uint64_t, HandedOut> handed_out_; // by handle_key
  std::uint64_t handles_made_ = 0;
  // The sizes of kept_ and handed_out_: receives and probes skip the lock while both are 0.
  std::atomic<std::size_t> kept_count_{0};
  std::atomic<std::size_t> handed_out_count_{0};
};

} // namespace commlens::runtime
