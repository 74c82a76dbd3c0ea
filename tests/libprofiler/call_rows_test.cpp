// The merged file's calls: mpi_call_rows stores them compactly, the mpi_calls view gives back every
// documented column, rows written through the view are stored as the merge stores them, a lane's
// calls are found by time without an index, and a call costs at most 40 bytes.
#include "commlens/profiler/call_lanes.hpp"
#include "commlens/profiler/merge.hpp"
#include "commlens/profiler/profiler.hpp"
#include "commlens/profiler/schema.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "commlens/profiler/sqlite_lane_probe.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace commlens;

const std::vector<FunctionDescription> kFunctions = {{"MPI_Unused", "none"},
                                                     {"MPI_Isend", "p2p", TagOrRoot::Tag},
                                                     {"MPI_Bcast", "collective", TagOrRoot::Root},
                                                     {"MPI_Wait", "completion"}};

// One recorded call and the mpi_calls row it must become.
struct Expected {
  EventRecord record;
  std::optional<std::int64_t> tag, root, request_id, datatype;
};

// Records `calls` calls on rank `rank` of `size`: Isends (tag, request, bytes, datatype), Bcasts
// (root, device buffer, a runtime implementation) and Waits (completing the last Isend).
std::vector<Expected> record_rank(const fs::path& directory, int rank, int size, int calls) {
  Config config;
  config.output_directory = directory.string();
  config.mode = Mode::Trace;
  Profiler* profiler = Profiler::start(config, ProcessIdentity{rank, size, "host", 100 + rank}, kFunctions);
  EXPECT_NE(profiler, nullptr);
  profiler->set_run_value("world_size", std::to_string(size));
  ThreadRecorder* recorder = profiler->thread_recorder();
  std::vector<Expected> expected;
  std::uint64_t last_isend = 0;
  for (int i = 0; i < calls; ++i) {
    Expected call{};
    EventRecord& record = call.record;
    record.start_ticks = now_ticks();
    record.call_id = recorder->next_call_id();
    record.communicator_index = kNoCommunicator;
    record.tag_or_root = kNoTagOrRoot;
    switch (i % 3) {
    case 0: // MPI_Isend
      record.function = 1;
      record.bytes_sent = 1024 + static_cast<std::uint64_t>(i % 1000);
      record.peer = i % 7 == 0 ? kPeerProcNull : i % size;
      record.tag_or_root = i % 11 == 0 ? 0 : 40000 + i;
      record.request_id = record.call_id;
      record.datatype = 3;
      record.location = BufferLocation::Host;
      last_isend = record.call_id;
      call.tag = record.tag_or_root;
      call.request_id = static_cast<std::int64_t>(record.call_id);
      call.datatype = 3;
      break;
    case 1: // MPI_Bcast
      record.function = 2;
      record.bytes_sent = record.bytes_recv = 1 << (i % 20);
      record.peer = kNoPeer;
      record.tag_or_root = i % 5;
      record.datatype = 9;
      record.location = BufferLocation::Device;
      record.implementation = 15;
      call.root = record.tag_or_root;
      call.datatype = 9;
      break;
    default: // MPI_Wait
      record.function = 3;
      record.peer = kPeerAnySource;
      record.request_id = last_isend;
      call.request_id = static_cast<std::int64_t>(last_isend);
      break;
    }
    record.end_ticks = now_ticks();
    recorder->record_call(record, 0);
    expected.push_back(call);
  }
  profiler->stop();
  return expected;
}

fs::path fresh_directory(const std::string& name) {
  const fs::path directory = fs::path(testing::TempDir()) / name;
  fs::remove_all(directory);
  return directory;
}

TEST(CallRows, TheViewGivesBackEveryColumnOfEveryMergedCall) {
  const fs::path directory = fresh_directory("call-rows-round-trip");
  const std::vector<Expected> expected = record_rank(directory, 5, 6, 3000);
  const MergeResult merged = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  SqliteDatabase db(merged.output_path, SQLITE_OPEN_READONLY);
  auto rows =
      db.prepare("SELECT id, rank, thread, function_id, end_ns - start_ns >= 0, bytes_sent, bytes_recv, "
                 "peer, tag, comm_id, root, request_id, buffer_location, implementation, phase, "
                 "datatype FROM mpi_calls ORDER BY id");
  const auto optional_column = [&](int column) {
    return rows.column_is_null(column) ? std::nullopt : std::optional(rows.column_int64(column));
  };
  std::size_t index = 0;
  for (; rows.step() && index < expected.size(); ++index) {
    const Expected& call = expected[index];
    const EventRecord& record = call.record;
    SCOPED_TRACE(fmt::format("call {}", index));
    EXPECT_EQ(rows.column_int64(0), static_cast<std::int64_t>(record.call_id));
    EXPECT_EQ(rows.column_int64(1), 5);
    EXPECT_EQ(rows.column_int64(2), 0);
    EXPECT_EQ(rows.column_int64(3), record.function);
    EXPECT_EQ(rows.column_int64(4), 1); // end_ns - start_ns >= 0
    EXPECT_EQ(rows.column_int64(5), static_cast<std::int64_t>(record.bytes_sent));
    EXPECT_EQ(rows.column_int64(6), static_cast<std::int64_t>(record.bytes_recv));
    EXPECT_EQ(rows.column_int64(7), record.peer);
    EXPECT_EQ(optional_column(8), call.tag);
    EXPECT_EQ(optional_column(9), std::nullopt);
    EXPECT_EQ(optional_column(10), call.root);
    EXPECT_EQ(optional_column(11), call.request_id);
    EXPECT_EQ(rows.column_int64(12), static_cast<int>(record.location));
    EXPECT_EQ(rows.column_int64(13), record.implementation);
    EXPECT_EQ(rows.column_int64(14), 0);
    EXPECT_EQ(optional_column(15), call.datatype);
  }
  EXPECT_EQ(index, expected.size());
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls"), 3000);
  // Calls on one thread do not overlap: each starts at or after the previous one's end.
  EXPECT_EQ(
      db.query_int64("SELECT count(*) FROM (SELECT start_ns, lag(end_ns) OVER (ORDER BY id) AS previous_end "
                     "FROM mpi_calls) WHERE start_ns < previous_end"),
      0);
}

// A new file with the schema, attached to `db` as `name`.
void attach_new(SqliteDatabase& db, const fs::path& path, const char* name) {
  fs::remove(path);
  SqliteDatabase(path.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE).exec(schema::kCreateTables);
  db.prepare(fmt::format("ATTACH DATABASE ? AS {}", name)).bind(1, path.string()).run();
}

TEST(CallRows, RowsWrittenThroughTheViewAreStoredAsTheMergeStoresThem) {
  const fs::path directory = fresh_directory("call-rows-through-view");
  record_rank(directory, 2, 3, 900);
  SqliteDatabase db(merge_rank_databases(MergeOptions{directory.string(), "", nullptr}).output_path,
                    SQLITE_OPEN_READWRITE);
  attach_new(db, directory / "copy.sqlite", "copy");
  db.exec("INSERT INTO copy.mpi_calls SELECT * FROM main.mpi_calls");
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM copy.mpi_call_rows"), 900);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM (SELECT * FROM main.mpi_call_rows EXCEPT "
                           "SELECT * FROM copy.mpi_call_rows)"),
            0);
}

TEST(CallRows, EveryColumnRoundTripsAtTheEdgesOfItsEncoding) {
  const fs::path path = fresh_directory("call-rows-edges");
  fs::create_directories(path);
  SqliteDatabase db((path / "edges.sqlite").string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  db.exec(schema::kCreateTables);
  const std::string rows =
      fmt::format("({0} | 1, 1023, 1023, 2047, -5000000000, 9000000000, 0, 9223372036854775807, -3, -1, {1}, "
                  "NULL, {0} | 1, "
                  "3, 15, 70000, NULL), "
                  "({0} | 2, 1023, 1023, 0, 1, 1, 5, 0, -2, NULL, 0, 0, NULL, 0, 0, 0, 0), "
                  "({0} | 3, 1023, 1023, 7, 2, 3, 0, 0, 12, NULL, NULL, NULL, {0} | 1, 2, 1, 1, 250), "
                  "(5, 0, 0, 1, 4, 4, 1, 1, 0, 2147483647, 4294967297, NULL, NULL, 1, 0, 0, 3)",
                  std::int64_t{1023} << 46 | std::int64_t{1023} << 36, std::int64_t{1} << 62 | 5);
  db.exec("CREATE TABLE expected AS SELECT * FROM mpi_calls WHERE 0");
  db.exec("INSERT INTO expected VALUES " + rows);
  db.exec("INSERT INTO mpi_calls SELECT * FROM expected");
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_call_rows"), 4);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM mpi_calls)"),
            0);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM (SELECT * FROM mpi_calls EXCEPT SELECT * FROM expected)"),
            0);
  // rank and thread are the id's bits: a row that contradicts its id is refused, not stored wrong.
  EXPECT_THROW(db.exec("INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, "
                       "bytes_recv, peer) VALUES (6, 1, 0, 1, 0, 0, 0, 0, -1)"),
               SqliteError);
  EXPECT_THROW(db.exec("INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, "
                       "bytes_recv, peer) VALUES (7, 0, 0, 2048, 0, 0, 0, 0, -1)"),
               SqliteError);
}

// Lanes with gaps in their sequences and calls that start together, against plain SQL.
TEST(CallRows, TimeSeeksByIdMatchTheCallsTheyFind) {
  const fs::path path = fresh_directory("call-rows-seeks");
  fs::create_directories(path);
  SqliteDatabase db((path / "seeks.sqlite").string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  db.exec(schema::kCreateTables);
  struct Lane {
    std::int64_t rank, thread;
    int calls, stride;
  };
  const Lane lanes[] = {{2, 0, 300, 3}, {2, 5, 40, 1000}, {7, 0, 1, 1}, {7, 1023, 77, 1}};
  db.exec("BEGIN");
  for (const Lane& lane : lanes) {
    std::int64_t now = 1000 * lane.thread;
    for (int i = 0; i < lane.calls; ++i) {
      const std::int64_t id = lane.rank << 46 | lane.thread << 36 | std::int64_t{i} * lane.stride;
      const std::int64_t duration = i % 4 == 0 ? 0 : 7; // zero-length calls share their start
      db.exec(
          fmt::format("INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, "
                      "bytes_recv, peer) VALUES ({}, {}, {}, 1, {}, {}, 0, 0, -1)",
                      id, lane.rank, lane.thread, now, now + duration));
      now += duration + (i % 9 == 0 ? 50 : 0);
    }
  }
  db.exec("COMMIT");
  call_lanes::SqliteLaneProbe probe(db);
  const auto id_or_none = [&](const std::string& sql) {
    auto query = db.prepare(sql);
    return query.step() ? query.column_int64(0) : -1;
  };
  const auto found_id = [](const std::optional<call_lanes::LaneCall>& call) { return call ? call->id : -1; };
  for (const Lane& lane : lanes) {
    const auto ids = call_lanes::lane_ids(lane.rank, lane.thread);
    // From before the lane's first call to past its last (a lane spans under 4000 ns here).
    for (std::int64_t time = 1000 * lane.thread - 10; time < 1000 * lane.thread + 4000; time += 3) {
      SCOPED_TRACE(fmt::format("rank {} thread {} time {}", lane.rank, lane.thread, time));
      const std::string in_lane =
          fmt::format("FROM mpi_calls WHERE rank = {} AND thread = {}", lane.rank, lane.thread);
      EXPECT_EQ(
          found_id(call_lanes::first_call_from(probe, ids, time)),
          id_or_none(fmt::format("SELECT id {} AND start_ns >= {} ORDER BY id LIMIT 1", in_lane, time)));
      EXPECT_EQ(
          found_id(call_lanes::last_call_before(probe, ids, time)),
          id_or_none(fmt::format("SELECT id {} AND start_ns < {} ORDER BY id DESC LIMIT 1", in_lane, time)));
    }
  }
  EXPECT_EQ(call_lanes::threads_of_rank(probe, 2), (std::vector<std::int64_t>{0, 5}));
  EXPECT_EQ(call_lanes::threads_of_rank(probe, 7), (std::vector<std::int64_t>{0, 1023}));
  EXPECT_TRUE(call_lanes::threads_of_rank(probe, 3).empty());
  for (const std::int64_t rank : {2, 7}) {
    const auto span = call_lanes::rank_span(probe, rank);
    ASSERT_TRUE(span);
    EXPECT_EQ(span->start_ns,
              db.query_int64(fmt::format("SELECT min(start_ns) FROM mpi_calls WHERE rank = {}", rank)));
    EXPECT_EQ(span->end_ns,
              db.query_int64(fmt::format(
                  "SELECT end_ns FROM mpi_calls WHERE rank = {} ORDER BY start_ns DESC, id LIMIT 1", rank)));
  }
}

// The target for a traced call on disk: at most 40 bytes, the table and every index on it (the
// rows of the earlier schema were 36 to 47 bytes with a 15.5 to 20 byte index beside them). Rank
// 9, so that call ids take 8 bytes as on any rank from 8 on.
TEST(CallRows, AMergedCallTakesAtMostFortyBytes) {
  const fs::path directory = fresh_directory("call-rows-size");
  record_rank(directory, 9, 10, 60000);
  SqliteDatabase db(merge_rank_databases(MergeOptions{directory.string(), "", nullptr}).output_path,
                    SQLITE_OPEN_READONLY);
  // Whatever stores the calls: mpi_call_rows, or a mpi_calls table as earlier versions had, and
  // every index on either.
  const auto bytes = db.query_int64(
      "SELECT sum(pgsize) FROM dbstat WHERE name IN ('mpi_call_rows', 'mpi_calls') OR name IN (SELECT name "
      "FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('mpi_call_rows', 'mpi_calls'))");
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls"), 60000);
  const double per_call = static_cast<double>(bytes) / 60000.0;
  RecordProperty("bytes_per_call", std::to_string(per_call));
  std::printf("mpi_calls: %.2f bytes a call\n", per_call);
  EXPECT_LE(per_call, 40.0);
}

} // namespace
