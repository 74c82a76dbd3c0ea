#include "commlens/profiler/nccl_call_chunk.hpp"
#include "commlens/profiler/schema.hpp"
#include "commlens/profiler/sqlite.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace {

using namespace commlens;

std::vector<NcclCallFields> sample_calls() {
  std::vector<NcclCallFields> calls;
  for (std::uint64_t i = 0; i < 300; ++i) {
    NcclCallFields& call = calls.emplace_back();
    call.call_id = (5ull << 46) + (1ull << 30) + i * 5 + i % 4 + 1; // increasing, in uneven steps
    call.details.datatype = i % 5 == 0 ? NcclCallDetails::kNone : static_cast<int>(i % 12);
    call.details.op = i % 3 == 0 ? NcclCallDetails::kNone : static_cast<int>(i % 7);
    call.details.stream = i % 6 == 0
                              ? NcclCallDetails::kNoStream
                              : (i % 6 == 1 ? 0 : 0x7f00'1234'5600 + static_cast<std::int64_t>(i % 3) * 64);
    call.details.root = i % 4 == 0 ? static_cast<int>(i % 9) : NcclCallDetails::kNone;
    call.details.peer = i % 4 == 1 ? static_cast<int>(i * 1000) : NcclCallDetails::kNone;
    call.details.group_depth = static_cast<int>(i % 3);
  }
  return calls;
}

void expect_same(const NcclCallFields& got, const NcclCallFields& want) {
  EXPECT_EQ(got.call_id, want.call_id);
  EXPECT_EQ(got.details.datatype, want.details.datatype);
  EXPECT_EQ(got.details.op, want.details.op);
  EXPECT_EQ(got.details.stream, want.details.stream);
  EXPECT_EQ(got.details.root, want.details.root);
  EXPECT_EQ(got.details.peer, want.details.peer);
  EXPECT_EQ(got.details.group_depth, want.details.group_depth);
}

TEST(NcclCallChunk, DecodesWhatItEncodes) {
  const auto calls = sample_calls();
  std::string chunk;
  encode_nccl_calls(calls, chunk);
  EXPECT_LT(chunk.size(), calls.size() * 16) << "a call should take a few bytes, not a row's worth";
  const auto decoded = decode_nccl_calls(chunk);
  ASSERT_EQ(decoded.size(), calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    expect_same(decoded[i], calls[i]);
  }
}

TEST(NcclCallChunk, RefusesATruncatedChunk) {
  std::string chunk;
  encode_nccl_calls(sample_calls(), chunk);
  chunk.back() = static_cast<char>(0x80); // a varint that never ends
  EXPECT_THROW(decode_nccl_calls(chunk), std::runtime_error);
}

// The merge's step: chunks stored as the collector stores them (bound as text, cast to a BLOB)
// become nccl_calls rows of the rank, with NULL for the fields a call does not have.
TEST(NcclCallChunk, MaterializesChunksIntoNcclCalls) {
  SqliteDatabase db(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  db.exec(schema::kCreateTables);
  const auto calls = sample_calls();
  const std::size_t half = calls.size() / 2;
  auto insert = db.prepare("INSERT INTO nccl_call_chunks (data) VALUES (CAST(? AS BLOB))");
  for (const auto& part :
       {std::vector(calls.begin(), calls.begin() + half), std::vector(calls.begin() + half, calls.end())}) {
    std::string chunk;
    encode_nccl_calls(part, chunk);
    insert.bind(1, std::string_view(chunk)).run();
  }
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM nccl_call_chunks WHERE typeof(data) = 'blob'"), 2);
  materialize_nccl_calls(db, "main", 5);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM nccl_calls WHERE rank = 5"),
            static_cast<std::int64_t>(calls.size()));
  auto rows =
      db.prepare("SELECT call_id, COALESCE(datatype, -1), COALESCE(op, -1), COALESCE(stream, -1), "
                 "COALESCE(root, -1), COALESCE(peer, -1), group_depth FROM nccl_calls ORDER BY call_id");
  for (const NcclCallFields& want : calls) {
    ASSERT_TRUE(rows.step());
    NcclCallFields got;
    got.call_id = static_cast<std::uint64_t>(rows.column_int64(0));
    got.details = {static_cast<int>(rows.column_int64(1)),
                   static_cast<int>(rows.column_int64(2)),
                   rows.column_int64(3),
                   static_cast<int>(rows.column_int64(4)),
                   static_cast<int>(rows.column_int64(5)),
                   static_cast<int>(rows.column_int64(6))};
    expect_same(got, want);
  }
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM nccl_calls WHERE datatype IS NULL"), 60);
}

} // namespace
