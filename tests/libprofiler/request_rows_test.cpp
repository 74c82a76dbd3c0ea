// The merged file's requests and tiles: mpi_request_rows stores the requests compactly, the
// mpi_requests view gives back every documented column, rows written through the view are stored
// as the merge stores them, a request costs at most 40 bytes, and the timeline tiles the merge
// builds while inserting the calls are those of a pass over the merged calls.
#include "commlens/profiler/merge.hpp"
#include "commlens/profiler/profiler.hpp"
#include "commlens/profiler/schema.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "commlens/profiler/timeline_tiles.hpp"
#include "integrity_check.hpp"
#include "recorded_ranks.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace commlens;

TEST(RequestRows, TheViewGivesBackEveryColumnOfEveryRequest) {
  const fs::path directory = fresh_directory("request-rows-round-trip");
  record_rank(directory, 0, 2, 600);
  record_rank(directory, 1, 2, 600);
  const MergeResult merged = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  SqliteDatabase db(merged.output_path, SQLITE_OPEN_READONLY);
  // Two requests per step, 600 steps on each main thread and 300 on each second thread.
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_requests"), 2 * 2 * 900);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_requests WHERE rank = 1"), 2 * 900);
  // Each request is that of the call which posted it, completed by the Waitall after it.
  EXPECT_EQ(
      db.query_int64(
          "SELECT count(*) FROM mpi_requests r JOIN mpi_calls p ON p.id = r.request_id JOIN mpi_calls w "
          "ON w.id = r.completion_call_id WHERE r.rank = p.rank AND r.function_id = p.function_id "
          "AND r.post_ns = p.start_ns AND r.complete_ns = w.end_ns AND r.peer = p.peer "
          "AND r.bytes_sent = p.bytes_sent AND r.bytes_recv = p.bytes_recv AND r.comm_id IS NULL "
          "AND w.function_id = 3 AND w.id = r.request_id + 2 - (p.function_id - 1)"),
      2 * 2 * 900);
}

TEST(RequestRows, RowsWrittenThroughTheViewAreStoredAsTheMergeStoresThem) {
  const fs::path directory = fresh_directory("request-rows-through-view");
  record_rank(directory, 3, 4, 300);
  SqliteDatabase db(merge_rank_databases(MergeOptions{directory.string(), "", nullptr}).output_path,
                    SQLITE_OPEN_READWRITE);
  const fs::path copy = directory / "copy.sqlite";
  SqliteDatabase(copy.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE).exec(schema::kCreateTables);
  db.prepare("ATTACH DATABASE ? AS copy").bind(1, copy.string()).run();
  db.exec("INSERT INTO copy.mpi_requests SELECT * FROM main.mpi_requests");
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM copy.mpi_request_rows"), 2 * 450);
  EXPECT_EQ(rows_differing(db, "main.mpi_request_rows", "copy.mpi_request_rows"), 0);
  // The rank is the request id's: a row that contradicts it is refused, not stored as another rank's.
  EXPECT_THROW(db.exec("INSERT INTO copy.mpi_requests VALUES (2, 5, 1, 0, 1, 6, 0, 0, 0, NULL)"),
               SqliteError);
}

// Rank 9, so that request ids take 8 bytes as on any rank from 8 on. The table and its index of
// the earlier schema cost 46 bytes a request.
TEST(RequestRows, AMergedRequestTakesAtMostFortyBytes) {
  const fs::path directory = fresh_directory("request-rows-size");
  record_rank(directory, 9, 10, 20000);
  SqliteDatabase db(merge_rank_databases(MergeOptions{directory.string(), "", nullptr}).output_path,
                    SQLITE_OPEN_READONLY);
  const auto bytes = db.query_int64(
      "SELECT sum(pgsize) FROM dbstat WHERE name IN ('mpi_request_rows', 'mpi_requests') OR name IN (SELECT "
      "name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('mpi_request_rows', 'mpi_requests'))");
  const auto requests = db.query_int64("SELECT count(*) FROM mpi_requests");
  EXPECT_EQ(requests, 2 * 30000);
  const double per_request = static_cast<double>(bytes) / static_cast<double>(requests);
  RecordProperty("bytes_per_request", std::to_string(per_request));
  std::printf("mpi_requests: %.2f bytes a request\n", per_request);
  EXPECT_LE(per_request, 40.0);
}

// The merge builds the tiles as it inserts the calls; rebuilding them from the merged calls, as a
// file without tiles would be, must give the same levels and rows.
TEST(RequestRows, TilesBuiltWhileMergingEqualThoseOfAPassOverTheCalls) {
  const fs::path directory = fresh_directory("merge-streamed-tiles");
  record_rank(directory, 0, 3, 2000);
  record_rank(directory, 1, 3, 500);
  record_rank(directory, 2, 3, 3000);
  SqliteDatabase db(merge_rank_databases(MergeOptions{directory.string(), "", nullptr}).output_path,
                    SQLITE_OPEN_READWRITE);
  db.exec("CREATE TABLE streamed_tiles AS SELECT * FROM timeline_tiles;"
          "CREATE TABLE streamed_levels AS SELECT * FROM timeline_tile_levels");
  ASSERT_GT(db.query_int64("SELECT count(*) FROM streamed_levels"), 1);
  const TimelineTileSummary rebuilt = build_timeline_tiles(db);
  EXPECT_EQ(rebuilt.tiles, db.query_int64("SELECT count(*) FROM streamed_tiles"));
  EXPECT_EQ(rows_differing(db, "streamed_levels", "timeline_tile_levels"), 0);
  EXPECT_EQ(rows_differing(db, "streamed_tiles", "timeline_tiles"), 0);
  // Every lane's calls are in the finest level's tiles once.
  EXPECT_EQ(db.query_int64("SELECT sum(calls) FROM streamed_tiles WHERE level = 0"),
            db.query_int64("SELECT count(*) FROM mpi_calls"));
}

// A rank file of an earlier commlens holds call rows of its own, which the merge copies rather than
// decodes: the tiles must count those calls too.
TEST(RequestRows, TilesCountTheCallRowsARankFileCarries) {
  const fs::path directory = fresh_directory("merge-tiles-copied-rows");
  record_rank(directory, 0, 1, 200);
  {
    SqliteDatabase rank_file((directory / rank_database_name(0)).string(), SQLITE_OPEN_READWRITE);
    rank_file.exec("INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, "
                   "bytes_recv, peer) VALUES (5 << 36 | 1, 0, 5, 3, 1000, 2000, 0, 0, -1)");
  }
  const MergeResult result = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  EXPECT_FALSE(result.rows_as_pages) << "the copied rows and the decoded ones share the tables: INSERTs";
  SqliteDatabase db(result.output_path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls"), 3 * (200 + 100) + 1);
  EXPECT_EQ(db.query_int64("SELECT sum(calls) FROM timeline_tiles WHERE level = 0"), 3 * (200 + 100) + 1);
  EXPECT_EQ(db.query_int64("SELECT sum(calls) FROM timeline_tiles WHERE thread = 5"),
            db.query_int64("SELECT count(*) FROM timeline_tile_levels"));
}

// The merge writes the call and request rows as b-tree pages of its own: the file must pass
// SQLite's integrity check and hold what the INSERTs give (requests completed out of posting
// order, a rank that fails after some of its rows and is skipped, tiles built along).
TEST(RequestRows, RowsWrittenAsPagesEqualThoseInserted) {
  const fs::path directory = fresh_directory("merge-rows-as-pages");
  record_rank(directory, 0, 3, 6000);
  record_rank(directory, 1, 3, 3000, true);
  record_rank(directory, 2, 3, 2000);
  MergeOptions as_pages{directory.string(), (directory / "pages.sqlite").string(), nullptr};
  MergeOptions by_inserts = as_pages;
  by_inserts.output_path = (directory / "inserts.sqlite").string();
  by_inserts.write_pages = false;
  testing::internal::CaptureStderr();
  const MergeResult pages = merge_rank_databases(as_pages);
  const MergeResult inserts = merge_rank_databases(by_inserts);
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(pages.rows_as_pages);
  EXPECT_FALSE(inserts.rows_as_pages);
  EXPECT_NE(warnings.find("rank-00001.sqlite"), std::string::npos) << warnings;
  EXPECT_EQ(pages.missing_ranks, (std::vector<int>{1}));
  EXPECT_EQ(inserts.missing_ranks, (std::vector<int>{1}));
  EXPECT_EQ(pages.calls, 3 * (6000 + 3000 + 2000 + 1000));
  EXPECT_EQ(pages.calls, inserts.calls);

  SqliteDatabase db(pages.output_path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(integrity(db), "ok");
  db.prepare("ATTACH DATABASE ? AS inserted").bind(1, inserts.output_path).run();
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_requests"), 2 * (6000 + 3000 + 2000 + 1000));
  for (const char* table : {"mpi_calls", "mpi_requests", "mpi_call_rows", "mpi_request_rows",
                            "timeline_tiles", "timeline_tile_levels"}) {
    EXPECT_EQ(rows_differing(db, fmt::format("main.{}", table), fmt::format("inserted.{}", table)), 0)
        << table;
  }
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls WHERE rank = 1"), 0);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_requests WHERE rank = 1"), 0);
}

// Merges `directory` twice, as pages and by INSERTs, checks that both hold the same calls and
// requests (`calls` calls, when given), and returns the pages' file.
std::string expect_pages_equal_inserts(const fs::path& directory, std::optional<std::int64_t> calls = {}) {
  MergeOptions as_pages{directory.string(), (directory / "pages.sqlite").string(), nullptr};
  MergeOptions by_inserts = as_pages;
  by_inserts.output_path = (directory / "inserts.sqlite").string();
  by_inserts.write_pages = false;
  const MergeResult pages = merge_rank_databases(as_pages);
  const MergeResult inserts = merge_rank_databases(by_inserts);
  EXPECT_TRUE(pages.rows_as_pages);
  SqliteDatabase db(pages.output_path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(integrity(db), "ok");
  if (calls) {
    EXPECT_EQ(pages.calls, static_cast<std::uint64_t>(*calls));
    EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls"), *calls);
  }
  db.prepare("ATTACH DATABASE ? AS inserted").bind(1, inserts.output_path).run();
  EXPECT_EQ(rows_differing(db, "main.mpi_call_rows", "inserted.mpi_call_rows"), 0);
  EXPECT_EQ(rows_differing(db, "main.mpi_request_rows", "inserted.mpi_request_rows"), 0);
  EXPECT_FALSE(fs::exists(pages.output_path + ".partial-bulk"));
  return pages.output_path;
}

// A request completed after more later requests than the merge holds back for sorting, and one
// completed twice, the second time long after the first was written: both go in by INSERT after
// the pages, and the file holds what the INSERT path gives (the later row of a request wins).
TEST(RequestRows, RequestsCompletedLongAfterLaterOnesEqualThoseInserted) {
  const fs::path directory = fresh_directory("merge-late-requests");
  constexpr int kRequests = 70000; // more than TraceRowWriter holds back
  record_rank_with(directory, 0, 1, [](Profiler& profiler) { record_late_completions(profiler, kRequests); });
  SqliteDatabase db(expect_pages_equal_inserts(directory), SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_requests"), kRequests + 1);
  EXPECT_EQ(db.query_int64("SELECT bytes_sent FROM mpi_requests ORDER BY request_id LIMIT 1"), 20);
  EXPECT_EQ(db.query_int64("SELECT bytes_sent FROM mpi_requests ORDER BY request_id LIMIT 1 OFFSET 1"), 30);
}

// Calls made from inside another call (MPI runs the program's callbacks: a generalized request's
// query function in MPI_Wait, attribute copy and delete functions in MPI_Comm_dup and
// MPI_Comm_free) end before it, so the outer call comes after the calls it made: the merge puts
// it among the rows of the leaf being filled and still writes every call as pages.
TEST(RequestRows, CallsEndingAfterTheCallsTheyMadeGoInAsPages) {
  const fs::path directory = fresh_directory("merge-nested-calls");
  constexpr int kOuterCalls = 5000, kInnerCalls = 2;
  record_rank_with(directory, 0, 1,
                   [&](Profiler& profiler) { record_nested_calls(profiler, kOuterCalls, kInnerCalls); });
  expect_pages_equal_inserts(directory, kOuterCalls * (1 + kInnerCalls));
}

// A thread whose call ids run backwards (no collector records them so): a call below the leaf
// being filled cannot go into the pages, so it is inserted after them; nothing is lost and the file
// holds what the INSERT path gives.
TEST(RequestRows, CallsFarOutOfIdOrderAreInsertedAfterThePages) {
  const fs::path directory = fresh_directory("merge-calls-out-of-order");
  constexpr int kCalls = 3000;
  record_rank_with(directory, 0, 1, [&](Profiler& profiler) {
    ThreadRecorder* recorder = profiler.thread_recorder();
    const std::uint64_t first = recorder->next_call_id();
    for (int step = 0; step < kCalls; ++step) {
      EventRecord call = plain_call(first + static_cast<std::uint64_t>(kCalls - step));
      recorder->record_call(call, 0);
    }
  });
  expect_pages_equal_inserts(directory, kCalls);
}

// Calls that each start 15 requests with ids of their own after the call's (as MPI_Startall's do)
// and complete them: the chunks count 16 records a call and each lane's ids span 16 a call, so the
// widths planned from that bound are finer than the calls give. The merge must see it and build
// the tiles again, at the widths of the calls it wrote.
TEST(RequestRows, TilesTakeTheWidthsOfTheCallsWrittenWhenThePlannedBoundIsHigh) {
  const fs::path directory = fresh_directory("merge-tiles-bound-high");
  constexpr int kCalls = 4000, kRequestsPerCall = 15;
  record_rank_with(directory, 0, 1, [&](Profiler& profiler) {
    ThreadRecorder* recorder = profiler.thread_recorder();
    for (int step = 0; step < kCalls; ++step) {
      EventRecord call = plain_call(recorder->next_call_id());
      for (int index = 0; index < kRequestsPerCall; ++index) {
        EventRecord completion = call;
        completion.kind = RecordKind::RequestCompletion;
        completion.function = 1;
        completion.request_id = recorder->next_call_id();
        recorder->record_request_completion(completion);
      }
      recorder->record_call(call, 0);
    }
  });
  const MergeResult result = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  EXPECT_EQ(result.calls, kCalls);
  SqliteDatabase db(result.output_path, SQLITE_OPEN_READWRITE);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_requests"), kCalls * kRequestsPerCall);
  db.exec("CREATE TABLE merged_tiles AS SELECT * FROM timeline_tiles;"
          "CREATE TABLE merged_levels AS SELECT * FROM timeline_tile_levels");
  build_timeline_tiles(db);
  EXPECT_EQ(rows_differing(db, "merged_levels", "timeline_tile_levels"), 0);
  EXPECT_EQ(rows_differing(db, "merged_tiles", "timeline_tiles"), 0);
  EXPECT_EQ(db.query_int64("SELECT sum(calls) FROM merged_tiles WHERE level = 0"), kCalls);
}

} // namespace
