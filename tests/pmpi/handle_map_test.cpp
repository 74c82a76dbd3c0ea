#include "handle_map.hpp"
#include "request_tracker.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace commlens::pmpi {
namespace {

TEST(HandleMap, FindsWhatWasInsertedAndForgetsWhatWasErased) {
  contract::HandleMap<int> map(64);
  map.insert(0x1000, 7);
  ASSERT_NE(map.find(0x1000), nullptr);
  EXPECT_EQ(map.find(0x1000)->value, 7);
  map.erase(map.find(0x1000));
  EXPECT_EQ(map.find(0x1000), nullptr);
}

TEST(HandleMap, ReinsertingAReusedHandleReplacesTheStaleEntry) {
  contract::HandleMap<int> map(64);
  map.insert(42, 1);
  map.insert(42, 2);
  EXPECT_EQ(map.find(42)->value, 2);
  map.erase(map.find(42));
  EXPECT_EQ(map.find(42), nullptr);
}

TEST(HandleMap, ReusesErasedSlotsSoLongRunsDoNotFillTheTable) {
  contract::HandleMap<int> map(16);
  for (std::uint64_t key = 1; key < 10'000; ++key) {
    ASSERT_NE(map.insert(key, 0), nullptr) << key;
    map.erase(map.find(key));
  }
  EXPECT_EQ(map.failed_inserts(), 0u);
}

TEST(HandleMap, RefusesInsertsBeyondCapacityAndCountsThem) {
  contract::HandleMap<int> map(8);
  for (std::uint64_t key = 1; key <= 9; ++key) {
    map.insert(key, 0);
  }
  EXPECT_EQ(map.failed_inserts(), 1u);
}

TEST(HandleMap, ConcurrentPostAndCompleteFromManyThreadsLosesNothing) {
  contract::HandleMap<TrackedRequest> map(1 << 12);
  std::atomic<int> found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::uint64_t i = 1; i <= 20'000; ++i) {
        const std::uint64_t key = (i << 3) | static_cast<std::uint64_t>(t);
        TrackedRequest request;
        request.request_id = key;
        map.insert(key, request);
        auto* slot = map.find(key);
        if (slot != nullptr && slot->value.request_id == key) {
          found.fetch_add(1);
          map.erase(slot);
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(found.load(), 4 * 20'000);
  EXPECT_EQ(map.failed_inserts(), 0u);
}

TEST(HandleKey, DistinguishesIntegerHandleZeroFromAnEmptySlot) {
  EXPECT_NE(contract::handle_key(0), 0u);
  int object = 0;
  EXPECT_EQ(contract::handle_key(&object), reinterpret_cast<std::uintptr_t>(&object));
}

} // namespace
} // namespace commlens::pmpi
