#pragma once
// The order in which the runtime would run nonblocking collectives: one lane per communicator, each
// a worker thread that runs its lane's jobs one at a time in the order they were posted. MPI orders
// the collectives of one communicator by call order on every rank, so running each lane in post
// order makes the n-th job of a communicator meet the n-th job of every other rank's same lane; and
// MPI lets ranks post collectives of different communicators in different orders, so lanes run
// beside each other (one thread for every lane would wait in one communicator's job for a rank that
// is still in another's). Plain C++ (no MPI, no CUDA): jobs must not call MPI, whose library is not
// thread-multiple. The calling thread only posts, polls (never blocking) and waits.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

namespace commlens::runtime::nonblocking {

// What a job ended with. `declined`: the job's agreement sent every rank of the communicator to the
// baseline (reason says why), which the calling thread must then post itself (it may call MPI).
struct Outcome {
  int rc = 0;
  bool declined = false;
  std::string reason;
};

using Ticket = std::uint64_t;  // a posted job, unique for the lanes' lifetime, from 1
using LaneKey = std::uint64_t; // a communicator (its job-wide id)

class OrderedLanes {
public:
  using Job = std::function<Outcome()>;

  OrderedLanes() = default;
  OrderedLanes(const OrderedLanes&) = delete;
  OrderedLanes& operator=(const OrderedLanes&) = delete;
  // Runs every job still queued, then joins the workers.
  ~OrderedLanes();

  // Queues `job` behind every job posted to `lane` before it; starts the lane's worker on its
  // first job.
  Ticket post(LaneKey lane, Job job);
  // The job's outcome once it ran, else nothing; never waits for a job (only for the lanes' lock,
  // which no job holds while it runs).
  std::optional<Outcome> poll(Ticket ticket) const;
  // Waits until the job ran and returns its outcome.
  Outcome wait(Ticket ticket) const;
  // Waits until every job posted to `lane` so far ran: a blocking collective on a communicator
  // runs after the nonblocking ones posted before it, as MPI orders them.
  void drain(LaneKey lane) const;
  // The caller completed the ticket's request: its outcome is forgotten.
  void retire(Ticket ticket);
  // Drains the lane and stops its worker (its communicator is being freed).
  void close(LaneKey lane);
  // Jobs posted and not retired, whether run or not.
  std::size_t outstanding() const;

private:
  struct Lane {
    std::deque<std::pair<Ticket, Job>> queue;
    Ticket last_posted = 0; // for drain: the lane's jobs run in ticket order
    Ticket last_ran = 0;
    bool stopping = false;
    std::condition_variable work;
    std::thread worker;
  };

  void run_lane(Lane& lane);
  void stop(Lane& lane, std::unique_lock<std::mutex>& lock);

  mutable std::mutex mutex_;
  mutable std::condition_variable ran_; // a job ran
  Ticket next_ticket_ = 1;
  std::unordered_map<LaneKey, std::unique_ptr<Lane>> lanes_;
  std::map<Ticket, std::optional<Outcome>> outcomes_; // posted, not retired; empty until run
};

} // namespace commlens::runtime::nonblocking
