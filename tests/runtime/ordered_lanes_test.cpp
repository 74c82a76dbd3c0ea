// The nonblocking collectives' lanes: post order per communicator, lanes beside each other (ranks may
// post collectives of different communicators in different orders), polls that never wait, drains.
#include "nonblocking/ordered_lanes.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <latch>
#include <numeric>
#include <vector>

namespace commlens::runtime::nonblocking {
namespace {

using namespace std::chrono_literals;

TEST(OrderedLanes, RunsALanesJobsOneAtATimeInPostOrder) {
  OrderedLanes lanes;
  std::mutex mutex;
  std::vector<int> order;
  std::atomic<int> running{0};
  std::atomic<int> most_running{0};
  std::vector<Ticket> tickets;
  for (int i = 0; i < 50; ++i) {
    tickets.push_back(lanes.post(7, [&, i] {
      most_running = std::max(most_running.load(), ++running);
      std::this_thread::sleep_for(100us);
      {
        std::lock_guard lock(mutex);
        order.push_back(i);
      }
      --running;
      return Outcome{i, false, {}};
    }));
  }
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(lanes.wait(tickets[i]).rc, i);
  }
  std::vector<int> expected(50);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(order, expected);
  EXPECT_EQ(most_running.load(), 1);
}

TEST(OrderedLanes, PollDoesNotWaitForARunningJob) {
  OrderedLanes lanes;
  std::latch release(1);
  const Ticket ticket = lanes.post(1, [&] {
    release.wait();
    return Outcome{3, true, "because"};
  });
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(lanes.poll(ticket).has_value());
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  release.count_down();
  const Outcome outcome = lanes.wait(ticket);
  EXPECT_EQ(outcome.rc, 3);
  EXPECT_TRUE(outcome.declined);
  EXPECT_EQ(outcome.reason, "because");
  ASSERT_TRUE(lanes.poll(ticket).has_value());
  EXPECT_EQ(lanes.outstanding(), 1u);
  lanes.retire(ticket);
  EXPECT_EQ(lanes.outstanding(), 0u);
  EXPECT_FALSE(lanes.poll(ticket).has_value());
}

// Two ranks, two communicators: rank 0 posts A then B, rank 1 posts B then A; each job waits for the
// other rank's job of the same communicator (as a collective's agreement does). One worker for all
// lanes would wait forever in A on rank 0 and in B on rank 1.
TEST(OrderedLanes, CommunicatorsPostedInDifferentOrdersDoNotWaitForEachOther) {
  OrderedLanes rank0;
  OrderedLanes rank1;
  std::barrier<> meet_a(2);
  std::barrier<> meet_b(2);
  auto meet = [](std::barrier<>& barrier) {
    return [&barrier] {
      barrier.arrive_and_wait();
      return Outcome{};
    };
  };
  const Ticket a0 = rank0.post(1, meet(meet_a));
  const Ticket b0 = rank0.post(2, meet(meet_b));
  const Ticket b1 = rank1.post(2, meet(meet_b));
  const Ticket a1 = rank1.post(1, meet(meet_a));
  EXPECT_EQ(rank0.wait(a0).rc, 0);
  EXPECT_EQ(rank0.wait(b0).rc, 0);
  EXPECT_EQ(rank1.wait(b1).rc, 0);
  EXPECT_EQ(rank1.wait(a1).rc, 0);
}

// The n-th job of a communicator meets the n-th of the other rank's (call order matches ranks' jobs).
TEST(OrderedLanes, TheNthJobsOfALaneMeetAcrossRanks) {
  constexpr int kJobs = 20;
  OrderedLanes ranks[2];
  std::barrier<> meet(2);
  std::atomic<int> seen[2][kJobs] = {};
  std::atomic<bool> mismatch{false};
  std::vector<Ticket> tickets[2];
  for (int job = 0; job < kJobs; ++job) {
    for (int rank = 0; rank < 2; ++rank) {
      tickets[rank].push_back(ranks[rank].post(5, [&, rank, job] {
        seen[rank][job] = 1;
        meet.arrive_and_wait();
        if (seen[1 - rank][job] != 1) {
          mismatch = true;
        }
        meet.arrive_and_wait();
        return Outcome{};
      }));
    }
  }
  for (int rank = 0; rank < 2; ++rank) {
    for (Ticket ticket : tickets[rank]) {
      ranks[rank].wait(ticket);
    }
  }
  EXPECT_FALSE(mismatch.load());
}

TEST(OrderedLanes, DrainWaitsForItsLaneOnly) {
  OrderedLanes lanes;
  std::latch other_lane(1);
  std::atomic<int> ran{0};
  lanes.post(2, [&] {
    other_lane.wait();
    return Outcome{};
  });
  for (int i = 0; i < 5; ++i) {
    lanes.post(1, [&] {
      std::this_thread::sleep_for(1ms);
      ++ran;
      return Outcome{};
    });
  }
  lanes.drain(1); // returns although lane 2's job is still waiting
  EXPECT_EQ(ran.load(), 5);
  lanes.drain(99); // a lane never posted to
  other_lane.count_down();
  lanes.drain(2);
  EXPECT_EQ(lanes.outstanding(), 6u);
}

TEST(OrderedLanes, CloseAndDestructionRunEveryQueuedJob) {
  std::atomic<int> ran{0};
  {
    OrderedLanes lanes;
    for (int i = 0; i < 10; ++i) {
      lanes.post(i % 2, [&] {
        std::this_thread::sleep_for(200us);
        ++ran;
        return Outcome{};
      });
    }
    lanes.close(0);
    EXPECT_GE(ran.load(), 5);
    const Ticket again = lanes.post(0, [] { return Outcome{9, false, {}}; }); // a new lane of the same key
    EXPECT_EQ(lanes.wait(again).rc, 9);
  }
  EXPECT_EQ(ran.load(), 10);
}

} // namespace
} // namespace commlens::runtime::nonblocking
