// The nonblocking collectives' request states: allowed transitions only, and finished jobs handed
// out per communicator in post order, stopping at the first job that has not run.
#include "nonblocking/request_states.hpp"

#include <gtest/gtest.h>

#include <set>

namespace commlens::runtime::nonblocking {
namespace {

using S = RequestState;
using E = RequestEvent;

TEST(RequestStates, OnlyTheDrawnTransitionsExist) {
  const std::set<std::tuple<S, E, S>> allowed = {{S::Posted, E::JobRan, S::Ran},
                                                 {S::Posted, E::JobDeclined, S::Declined},
                                                 {S::Declined, E::BaselinePosted, S::InBaseline},
                                                 {S::InBaseline, E::BaselineDone, S::Completed},
                                                 {S::Ran, E::RequestCompleted, S::Completed},
                                                 {S::Completed, E::Returned, S::Finished}};
  for (int s = 0; s <= static_cast<int>(S::Finished); ++s) {
    for (int e = 0; e <= static_cast<int>(E::Returned); ++e) {
      const auto state = static_cast<S>(s);
      const auto event = static_cast<E>(e);
      const std::optional<S> next = after(state, event);
      bool expected = false;
      for (const auto& [from, on, to] : allowed) {
        if (from == state && on == event) {
          expected = true;
          EXPECT_EQ(next, to) << state_name(state);
        }
      }
      EXPECT_EQ(next.has_value(), expected) << state_name(state) << " event " << e;
    }
  }
}

TEST(RequestStates, ARequestGoesThroughItsLifeAndIsRemovedWhenFinished) {
  RequestStates states;
  states.add(10, 1, 1);
  EXPECT_EQ(states.incomplete(), 1u);
  EXPECT_FALSE(states.apply(10, E::Returned)); // not completed yet: a wait must not return it
  EXPECT_FALSE(states.remove(10));
  EXPECT_TRUE(states.apply(10, E::JobRan));
  EXPECT_TRUE(states.apply(10, E::RequestCompleted));
  EXPECT_EQ(states.incomplete(), 0u);
  EXPECT_TRUE(states.apply(10, E::Returned));
  EXPECT_EQ(states.state(10), S::Finished);
  EXPECT_TRUE(states.remove(10));
  EXPECT_TRUE(states.empty());
  EXPECT_FALSE(states.apply(10, E::JobRan)); // unknown key
}

TEST(RequestStates, FinishedJobsComeInPostOrderPerLaneUpToTheFirstNotRun) {
  RequestStates states;
  // Lane 1: tickets 1, 3, 5; lane 2: tickets 2, 4.
  states.add(101, 1, 1);
  states.add(102, 2, 2);
  states.add(103, 1, 3);
  states.add(104, 2, 4);
  states.add(105, 1, 5);
  std::map<Ticket, Outcome> ran = {{1, {0, true, "host buffer on rank 1"}}, {2, {0, false, {}}}, {5, {}}};
  auto poll = [&](Ticket ticket) -> std::optional<Outcome> {
    const auto found = ran.find(ticket);
    return found == ran.end() ? std::nullopt : std::optional(found->second);
  };
  std::vector<NextAction> actions = states.next_actions(poll);
  // Ticket 5 ran but ticket 3 before it on lane 1 has not: 5 must wait (3 may still decline).
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].request_key, 101u);
  EXPECT_EQ(actions[0].event, E::JobDeclined);
  EXPECT_EQ(actions[0].outcome.reason, "host buffer on rank 1");
  EXPECT_EQ(actions[1].request_key, 102u);
  EXPECT_EQ(actions[1].event, E::JobRan);
  EXPECT_EQ(states.state(101), S::Declined);
  EXPECT_EQ(states.state(105), S::Posted);
  EXPECT_TRUE(states.next_actions(poll).empty()); // handed out once
  ran[3] = {};
  actions = states.next_actions(poll);
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].request_key, 103u);
  EXPECT_EQ(actions[1].request_key, 105u);
  EXPECT_EQ(states.incomplete(), 5u);
}

} // namespace
} // namespace commlens::runtime::nonblocking
