#include "nonblocking/request_states.hpp"

#include <algorithm>

namespace commlens::runtime::nonblocking {

std::optional<RequestState> after(RequestState state, RequestEvent event) {
  using S = RequestState;
  using E = RequestEvent;
  switch (event) {
  case E::JobRan:
    return state == S::Posted ? std::optional(S::Ran) : std::nullopt;
  case E::JobDeclined:
    return state == S::Posted ? std::optional(S::Declined) : std::nullopt;
  case E::BaselinePosted:
    return state == S::Declined ? std::optional(S::InBaseline) : std::nullopt;
  case E::BaselineDone:
    return state == S::InBaseline ? std::optional(S::Completed) : std::nullopt;
  case E::RequestCompleted:
    return state == S::Ran ? std::optional(S::Completed) : std::nullopt;
  case E::Returned:
    return state == S::Completed ? std::optional(S::Finished) : std::nullopt;
  }
  return std::nullopt;
}

const char* state_name(RequestState state) {
  switch (state) {
  case RequestState::Posted:
    return "posted";
  case RequestState::Ran:
    return "ran";
  case RequestState::Declined:
    return "declined";
  case RequestState::InBaseline:
    return "in_baseline";
  case RequestState::Completed:
    return "completed";
  case RequestState::Finished:
    return "finished";
  }
  return "?";
}

void RequestStates::add(std::uint64_t request_key, LaneKey lane, Ticket ticket) {
  requests_[request_key] = {lane, ticket, RequestState::Posted};
  by_lane_[{lane, ticket}] = request_key;
}

bool RequestStates::apply(std::uint64_t request_key, RequestEvent event) {
  const auto found = requests_.find(request_key);
  if (found == requests_.end()) {
    return false;
  }
  const std::optional<RequestState> next = after(found->second.state, event);
  if (!next) {
    return false;
  }
  if (found->second.state == RequestState::Posted) {
    by_lane_.erase({found->second.lane, found->second.ticket});
  }
  found->second.state = *next;
  return true;
}

std::optional<RequestState> RequestStates::state(std::uint64_t request_key) const {
  const auto found = requests_.find(request_key);
  return found == requests_.end() ? std::nullopt : std::optional(found->second.state);
}

std::vector<NextAction>
RequestStates::next_actions(const std::function<std::optional<Outcome>(Ticket)>& poll) {
  std::vector<NextAction> actions;
  std::optional<LaneKey> blocked; // a lane whose earliest Posted job has not run
  for (auto it = by_lane_.begin(); it != by_lane_.end();) {
    const auto [lane, ticket] = it->first;
    const std::uint64_t key = it->second;
    ++it; // apply() below erases the current element
    if (blocked == lane) {
      continue;
    }
    std::optional<Outcome> outcome = poll(ticket);
    if (!outcome) {
      blocked = lane;
      continue;
    }
    const RequestEvent event = outcome->declined ? RequestEvent::JobDeclined : RequestEvent::JobRan;
    apply(key, event);
    actions.push_back({key, event, std::move(*outcome)});
  }
  return actions;
}

bool RequestStates::remove(std::uint64_t request_key) {
  const auto found = requests_.find(request_key);
  if (found == requests_.end() || found->second.state != RequestState::Finished) {
    return false;
  }
  requests_.erase(found);
  return true;
}

std::size_t RequestStates::incomplete() const {
  return static_cast<std::size_t>(std::count_if(requests_.begin(), requests_.end(), [](const auto& entry) {
    return entry.second.state < RequestState::Completed;
  }));
}

} // namespace commlens::runtime::nonblocking
