#include "commlens/profiler/event_ring.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace {

commlens::EventRecord record_with_id(std::uint64_t id) {
  commlens::EventRecord record{};
  record.call_id = id;
  return record;
}

std::vector<std::uint64_t> drain_ids(commlens::EventRing& ring) {
  std::vector<std::uint64_t> ids;
  ring.drain([&](std::span<const commlens::EventRecord> records) {
    for (const auto& record : records) {
      ids.push_back(record.call_id);
    }
  });
  return ids;
}

TEST(EventRing, DrainsRecordsInOrderAcrossTheWrapAround) {
  commlens::EventRing ring(8);
  for (std::uint64_t id = 1; id <= 6; ++id) {
    ASSERT_TRUE(ring.try_push(record_with_id(id)));
  }
  EXPECT_EQ(drain_ids(ring), (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
  for (std::uint64_t id = 7; id <= 12; ++id) {
    ASSERT_TRUE(ring.try_push(record_with_id(id)));
  }
  EXPECT_EQ(drain_ids(ring), (std::vector<std::uint64_t>{7, 8, 9, 10, 11, 12}));
}

TEST(EventRing, RefusesRecordsWhenFullWithoutLosingStoredOnes) {
  commlens::EventRing ring(4);
  for (std::uint64_t id = 1; id <= 4; ++id) {
    ASSERT_TRUE(ring.try_push(record_with_id(id)));
  }
  EXPECT_FALSE(ring.try_push(record_with_id(5)));
  EXPECT_EQ(ring.dropped(), 0u); // refusing is not dropping: the caller waits and retries
  EXPECT_EQ(drain_ids(ring), (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

TEST(EventRing, DrainsAtMostTheLimitAndReleasesThoseSlots) {
  commlens::EventRing ring(8);
  for (std::uint64_t id = 1; id <= 8; ++id) {
    ASSERT_TRUE(ring.try_push(record_with_id(id)));
  }
  std::vector<std::uint64_t> ids;
  EXPECT_EQ(ring.drain(
                [&](std::span<const commlens::EventRecord> records) {
                  for (const auto& record : records) {
                    ids.push_back(record.call_id);
                  }
                },
                3),
            3u);
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 2, 3}));
  for (std::uint64_t id = 9; id <= 11; ++id) {
    ASSERT_TRUE(ring.try_push(record_with_id(id))); // the three released slots
  }
  EXPECT_FALSE(ring.try_push(record_with_id(12)));
  EXPECT_EQ(drain_ids(ring), (std::vector<std::uint64_t>{4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST(EventRing, AWaitingProducerGoesOnOnceTheConsumerReleasesSlots) {
  commlens::EventRing ring(2);
  ASSERT_TRUE(ring.try_push(record_with_id(1)));
  ASSERT_TRUE(ring.try_push(record_with_id(2)));
  std::thread producer([&] {
    while (!ring.try_push(record_with_id(3))) {
      ring.wait_for_release();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(drain_ids(ring), (std::vector<std::uint64_t>{1, 2}));
  producer.join();
  EXPECT_EQ(drain_ids(ring), (std::vector<std::uint64_t>{3}));
}

TEST(EventRing, ConcurrentProducerAndConsumerLoseNothingWhenTheConsumerKeepsUp) {
  commlens::EventRing ring(1024);
  constexpr std::uint64_t kRecords = 200000;
  std::thread producer([&] {
    for (std::uint64_t id = 1; id <= kRecords;) {
      if (ring.try_push(record_with_id(id))) {
        ++id;
      }
    }
  });
  std::uint64_t expected = 1;
  std::uint64_t received = 0;
  while (received < kRecords) {
    for (std::uint64_t id : drain_ids(ring)) {
      ASSERT_EQ(id, expected++);
      ++received;
    }
  }
  producer.join();
  // A failed push is retried by this producer, so every id arrives exactly once and in order.
  EXPECT_EQ(expected - 1, kRecords);
}

} // namespace
