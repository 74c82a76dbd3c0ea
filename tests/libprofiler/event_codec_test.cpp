#include "commlens/profiler/event_codec.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

using namespace commlens;

EventRecord sample(std::uint64_t i) {
  EventRecord record{};
  record.start_ticks = 1'000'000'000'000ull + i * 977;
  record.end_ticks = record.start_ticks + 50 + i;
  record.call_id = (3ull << 46) + i + 1;
  record.bytes_sent = i * 1024;
  record.bytes_recv = i % 3 == 0 ? 0 : (1ull << 40) + i;
  record.request_id = i % 2 == 0 ? record.call_id : (i % 4 == 1 ? 0 : record.call_id - 7);
  record.communicator_index = i % 5 == 0 ? kNoCommunicator : static_cast<std::uint32_t>(i % 7);
  record.peer = i % 6 == 0 ? kPeerProcNull : static_cast<std::int32_t>(i % 64);
  record.tag_or_root = i % 8 == 0 ? kNoTagOrRoot : static_cast<std::int32_t>(i * 31);
  record.function = static_cast<FunctionId>(i % 300);
  record.datatype = static_cast<std::uint8_t>(i % 40);
  record.kind = i % 9 == 0 ? RecordKind::RequestCompletion : RecordKind::Call;
  record.location = static_cast<BufferLocation>(i % 4);
  record.implementation = static_cast<std::uint8_t>(i % 16);
  return record;
}

TEST(EventCodec, RoundTripsEveryFieldOfEveryRecord) {
  ChunkEncoder encoder;
  std::vector<EventRecord> records;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    records.push_back(sample(i));
    encoder.append(records.back());
  }
  ASSERT_EQ(encoder.count(), records.size());
  ChunkDecoder decoder(encoder.bytes());
  EventRecord decoded{};
  for (const EventRecord& expected : records) {
    ASSERT_TRUE(decoder.next(decoded));
    EXPECT_EQ(std::memcmp(&decoded, &expected, sizeof(EventRecord)), 0) << "call " << expected.call_id;
  }
  EXPECT_FALSE(decoder.next(decoded));
  EXPECT_FALSE(decoder.malformed());
}

TEST(EventCodec, TypicalRecordsTakeFarLessThanTheirInMemorySize) {
  ChunkEncoder encoder;
  for (std::uint64_t i = 0; i < 4096; ++i) {
    EventRecord record{};
    record.start_ticks = 5'000'000 + i * 3000;
    record.end_ticks = record.start_ticks + 400;
    record.call_id = (1ull << 46) + i;
    record.bytes_sent = 8192;
    record.request_id = record.call_id;
    record.peer = static_cast<std::int32_t>(i % 4);
    record.tag_or_root = 7;
    record.function = 12;
    record.datatype = 15;
    encoder.append(record);
  }
  EXPECT_LT(encoder.bytes().size(), 4096u * 20);
}

TEST(EventCodec, ATruncatedChunkEndsEarlyAndSaysSo) {
  ChunkEncoder encoder;
  encoder.append(sample(1));
  encoder.append(sample(2));
  std::vector<std::uint8_t> torn(encoder.bytes().begin(), encoder.bytes().end() - 3);
  ChunkDecoder decoder(torn);
  EventRecord decoded{};
  EXPECT_TRUE(decoder.next(decoded));
  EXPECT_FALSE(decoder.next(decoded));
  EXPECT_TRUE(decoder.malformed());
}

} // namespace
