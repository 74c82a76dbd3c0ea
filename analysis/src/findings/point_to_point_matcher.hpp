#pragma once
// Late senders and late receivers (wait_states.hpp): pairs sends and receives channel by channel
// as the scan meets them, and measures each blocking side once its blocking interval is known (a
// nonblocking call's is that of the wait that completed it, met later on its rank).
#include "wait_accumulator.hpp"

#include <deque>
#include <set>
#include <unordered_map>

namespace commlens::analysis::detail {

enum class PointToPointRole {
  Send,               // can leave before its receive is posted: MPI_Isend, MPI_Bsend, MPI_Rsend, ...
  BlockingSend,       // MPI_Send, MPI_Ssend: may wait for the receive
  NonblockingSsend,   // MPI_Issend: its wait may wait for the receive
  Receive,            // MPI_Recv
  NonblockingReceive, // MPI_Irecv: its wait may wait for the send
  SendReceive,        // MPI_Sendrecv and friends: a send, and a receive from an unrecorded source
  PersistentSend,     // MPI_Send_init and friends: started sends the trace cannot pair
  PersistentReceive,  // MPI_Recv_init, MPI_Precv_init
  MatchedReceive,     // MPI_Mrecv, MPI_Imrecv: receives of probed messages
  Completion,         // MPI_Wait, MPI_Waitall, MPI_Test, ...
};

class PointToPointMatcher {
public:
  explicit PointToPointMatcher(WaitAccumulator& waits) : waits_(waits) {}

  void add(const ScannedCall& call, PointToPointRole role);
  // Adds the waits still held (waits completing several requests) and returns whether a wait of
  // `rank` for `partner` on `comm_id` can be trusted: false where MPI could have matched otherwise.
  void finish();
  bool reliable(WaitKind kind, std::int64_t comm_id, int rank, int partner) const;

  // A blocking side waiting for its partner's posting time and its own blocking interval.
  struct Record {
    WaitKind kind = WaitKind::LateSender;
    std::int64_t comm_id = 0;
    int rank = 0;
    int partner = -1;
    std::int64_t partner_post_ns = 0;
    bool paired = false;
    bool blocked_known = false;
    bool through_completion = false; // blocked in a wait that may complete several requests
    // Who still holds the slot: a channel's queue, a lane's pending completions. It is free again
    // once neither does (a record whose completion call never came measures nothing).
    bool queued = false;
    bool pending = false;
    std::int64_t block_call = 0;
    int block_function = 0;
    int phase = 0;
    std::int64_t block_start_ns = 0;
    std::int64_t block_end_ns = 0;
  };

private:
  // (sender, receiver, tag, communicator): the messages MPI keeps in order.
  using Channel = std::tuple<int, int, std::int64_t, std::int64_t>;
  static constexpr std::int32_t kNoRecord = -1;
  struct Endpoint {
    std::int64_t post_ns = 0;
    int rank = 0;
    std::int32_t record = kNoRecord; // its record's slot, when its wait is measured
  };
  struct Queues {
    std::deque<Endpoint> sends;
    std::deque<Endpoint> receives;
  };
  // A record waiting for the call that completes its request, later on that call's lane.
  struct Pending {
    std::int64_t completion_call = 0;
    std::int32_t record = kNoRecord;
    bool operator>(const Pending& other) const { return completion_call > other.completion_call; }
  };

  void enqueue(const Channel& channel, bool send, const Endpoint& endpoint);
  std::int32_t record(const ScannedCall& call, WaitKind kind, std::int64_t comm_id, bool blocked_now);
  void release_if_unheld(std::int32_t slot);
  void unqueue(std::int32_t slot);
  void pair(std::int32_t slot, std::int64_t partner_post_ns, int partner);
  void measure(std::int32_t slot);
  void drop_channel(std::map<Channel, Queues>::iterator channel);
  void complete(const ScannedCall& call);
  void flag_pair(int sender, int receiver, std::int64_t comm_id);
  void flag_receiver(int receiver, std::int64_t comm_id);
  bool flagged(int sender, int receiver, std::int64_t comm_id) const;
  void flush_completions(std::int64_t before_ns);

  WaitAccumulator& waits_;
  std::map<Channel, Queues> channels_; // kept when empty: channels are few, messages many
  std::vector<Record> records_;        // slots, reused through free_records_
  std::vector<std::int32_t> free_records_;
  // Per lane (call id >> 36: rank and thread), the records waiting for their completion call on it,
  // earliest call first: the scan reads a lane's calls in id order, so a completion call id it has
  // passed will not come any more.
  static constexpr int kLaneShift = 36;
  std::unordered_map<std::int64_t, std::vector<Pending>> pending_;
  // A wait completing several requests waits once: its longest wait counts, added once the scan is
  // past the call's end (`completion_ends_`, in the order the scan met them, which is about the order
  // of their ends: one that ended earlier than those before it waits for them). Calls that did not
  // wait are not held.
  std::unordered_map<std::int64_t, Wait> completion_waits_;           // call -> its longest wait
  std::deque<std::pair<std::int64_t, std::int64_t>> completion_ends_; // (end, call), about in end order
  std::set<std::tuple<int, int, std::int64_t>> flagged_pairs_;        // sender, receiver, communicator
  std::set<std::pair<int, std::int64_t>> flagged_receivers_;          // receiver, communicator
  std::int64_t scanned_ = 0;
};

} // namespace commlens::analysis::detail
