#pragma once
// The life of a nonblocking collective's request as the calling thread sees it, and the order in
// which the calling thread may act on finished jobs. Plain C++ (no MPI, no CUDA), so the rules are
// tested on the host; the MPI side (a generalized request per entry) holds one RequestStates.
//
//   Posted --job ran--> Ran --request completed--> Completed --wait/test returned it--> Finished
//   Posted --job declined--> Declined --baseline posted--> InBaseline --baseline done--> Completed
//
// A declined job's baseline runs through MPI on a communicator private to the runtime, so every
// rank must post the declined calls of one communicator in the same order: next_actions() hands
// out a lane's finished jobs in post order and stops at the first job that has not run (it may
// still decline).
#include "nonblocking/ordered_lanes.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace commlens::runtime::nonblocking {

enum class RequestState : std::uint8_t { Posted, Ran, Declined, InBaseline, Completed, Finished };
enum class RequestEvent : std::uint8_t {
  JobRan,
  JobDeclined,
  BaselinePosted,
  BaselineDone,
  RequestCompleted,
  Returned
};

// The state after `event`, or nothing where the event cannot happen in `state` (a bug in the caller).
std::optional<RequestState> after(RequestState state, RequestEvent event);

const char* state_name(RequestState state);

// What the calling thread does next for a request whose job finished.
struct NextAction {
  std::uint64_t request_key;
  RequestEvent event; // JobRan: complete the request; JobDeclined: post the baseline
  Outcome outcome;
};

class RequestStates {
public:
  // A request posted on `lane` with the job `ticket`; tickets grow in post order.
  void add(std::uint64_t request_key, LaneKey lane, Ticket ticket);
  // Applies `event`; false (and no change) where it cannot happen in the request's state.
  bool apply(std::uint64_t request_key, RequestEvent event);
  std::optional<RequestState> state(std::uint64_t request_key) const;
  // For every lane, its Posted requests in post order whose jobs `poll` reports run, up to the first
  // not run: each with JobRan or JobDeclined applied already.
  std::vector<NextAction> next_actions(const std::function<std::optional<Outcome>(Ticket)>& poll);
  // Removes a Finished request; false for any other.
  bool remove(std::uint64_t request_key);
  // Requests not yet Completed (their MPI requests cannot complete without the calling thread).
  std::size_t incomplete() const;
  bool empty() const { return requests_.empty(); }

private:
  struct Entry {
    LaneKey lane;
    Ticket ticket;
    RequestState state = RequestState::Posted;
  };
  std::map<std::uint64_t, Entry> requests_;
  std::map<std::pair<LaneKey, Ticket>, std::uint64_t>
      by_lane_; // requests still Posted, per lane in post order
};

} // namespace commlens::runtime::nonblocking
