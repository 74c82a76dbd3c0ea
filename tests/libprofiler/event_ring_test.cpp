#include "commlens/profiler/event_ring.hpp"

#include <gtest/gtest.h>

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
    ASSERT_TRUE(ring.push(record_with_id(id)));
  }
  EXPECT_EQ(drain_ids(ring), (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
  for (std::uint64_t id = 7; id <= 12; ++id) {
    ASSERT_TRUE(ring.push(record_with_id(id)));
  }
  EXPECT_EQ(drain_ids(ring), (std::vector<std::uint64_t>{7, 8, 9, 10, 11, 12}));
}

TEST(EventRing, DropsAndCountsInsteadOfBlockingWhenFull) {
  commlens::EventRing ring(4);
  for (std::uint64_t id = 1; id <= 7; ++id) {
    ring.push(record_with_id(id));
  }
  EXPECT_EQ(ring.dropped(), 3u);
  EXPECT_EQ(drain_ids(ring), (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

TEST(EventRing, ConcurrentProducerAndConsumerLoseNothingWhenTheConsumerKeepsUp) {
  commlens::EventRing ring(1024);
  constexpr std::uint64_t kRecords = 200000;
  std::thread producer([&] {
    for (std::uint64_t id = 1; id <= kRecords;) {
      if (ring.push(record_with_id(id))) {
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
