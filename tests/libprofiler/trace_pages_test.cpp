// Pages ranks encode at MPI_Finalize (trace_pages.hpp): a merge that copies them must give the
// database that decoding every rank's chunks gives (rows, views, tiles, run values aside from the
// path record) and pass PRAGMA integrity_check; pages that are missing or were made for another
// plan (clock map, page size, tile widths) or whose file is gone must send that rank, and only
// it, through decoding.
#include "commlens/profiler/merge.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "commlens/profiler/trace_pages.hpp"
#include "integrity_check.hpp"
#include "recorded_ranks.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace commlens;

struct Merges {
  MergeResult copied;  // the ranks' pages where valid
  MergeResult decoded; // every rank's chunks
};

Merges merge_both_ways(const fs::path& directory) {
  MergeOptions with_pages{directory.string(), (directory / "pages.sqlite").string(), nullptr};
  MergeOptions decoding = with_pages;
  decoding.output_path = (directory / "decoded.sqlite").string();
  decoding.use_rank_pages = false;
  return Merges{merge_rank_databases(with_pages), merge_rank_databases(decoding)};
}

// Every trace table and view of the two merged files holds the same rows, both ways round.
void expect_same_trace(const Merges& merges) {
  SqliteDatabase db(merges.copied.output_path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(integrity(db), "ok");
  db.prepare("ATTACH DATABASE ? AS decoded").bind(1, merges.decoded.output_path).run();
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM decoded.mpi_calls"), merges.decoded.calls);
  for (const char* table :
       {"mpi_calls", "mpi_requests", "mpi_call_rows", "mpi_request_rows", "timeline_tiles",
        "timeline_tile_levels", "nccl_calls", "ranks", "profiler_overhead"}) {
    EXPECT_EQ(rows_differing(db, fmt::format("main.{}", table), fmt::format("decoded.{}", table)), 0)
        << table;
  }
  EXPECT_EQ(merges.copied.calls, merges.decoded.calls);
  EXPECT_TRUE(merges.decoded.trace_pages_ranks.empty());
}

std::string run_value(const std::string& path, const std::string& key) {
  SqliteDatabase db(path, SQLITE_OPEN_READONLY);
  auto query = db.prepare("SELECT value FROM run WHERE key = ?");
  query.bind(1, std::string_view(key));
  return query.step() ? query.column_text(0) : "(none)";
}

TEST(TracePages, CopiedPagesEqualDecodedChunks) {
  const fs::path directory = fresh_directory("trace-pages-equal");
  record_rank(directory, 0, 3, 5000);
  record_rank(directory, 1, 3, 40); // a leaf a table
  record_rank(directory, 2, 3, 3000);
  const std::vector<RankTracePages::Report> reports = encode_trace_pages_in(directory.string());
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[0].calls, 3u * (5000 + 2500));
  const Merges merges = merge_both_ways(directory);
  EXPECT_EQ(merges.copied.trace_pages_ranks, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(run_value(merges.copied.output_path, "trace_pages_ranks"), "0,1,2");
  EXPECT_EQ(run_value(merges.decoded.output_path, "trace_pages_ranks"), "");
  EXPECT_EQ(merges.copied.calls, 3u * (5000 + 2500 + 40 + 20 + 3000 + 1500));
  expect_same_trace(merges);
}

// One rank whose calls fit one leaf a table: the leaf is the table's root page.
TEST(TracePages, ASingleLeafIsTheRoot) {
  const fs::path directory = fresh_directory("trace-pages-single-leaf");
  record_rank(directory, 0, 1, 10);
  encode_trace_pages_in(directory.string());
  const Merges merges = merge_both_ways(directory);
  EXPECT_EQ(merges.copied.trace_pages_ranks, (std::vector<int>{0}));
  expect_same_trace(merges);
}

// Requests completed long after later ones, and twice: the rank leaves them to INSERTs too.
TEST(TracePages, LateRequestsGoInAfterThePages) {
  const fs::path directory = fresh_directory("trace-pages-late-requests");
  record_rank_with(directory, 0, 1, [](Profiler& profiler) { record_late_completions(profiler, 70000); });
  encode_trace_pages_in(directory.string());
  const Merges merges = merge_both_ways(directory);
  EXPECT_EQ(merges.copied.trace_pages_ranks, (std::vector<int>{0}));
  expect_same_trace(merges);
  SqliteDatabase db(merges.copied.output_path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int64("SELECT bytes_sent FROM mpi_requests ORDER BY request_id LIMIT 1 OFFSET 1"), 30);
}

// Calls that end after the calls they made (MPI_Wait running a generalized request's query
// function, which calls MPI_Status_set_elements and MPI_Status_set_cancelled): the rank still
// encodes its pages, and the merge copies them.
TEST(TracePages, ARankWhoseCallsEndAfterCallsTheyMadeEncodesItsPages) {
  const fs::path directory = fresh_directory("trace-pages-nested-calls");
  record_rank_with(directory, 0, 1, [](Profiler& profiler) { record_nested_calls(profiler, 4000, 2); });
  const std::vector<RankTracePages::Report> reports = encode_trace_pages_in(directory.string());
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].calls, 3u * 4000);
  const Merges merges = merge_both_ways(directory);
  EXPECT_EQ(merges.copied.trace_pages_ranks, (std::vector<int>{0}));
  expect_same_trace(merges);
}

// A call that made more calls than a leaf holds (a callback's long loop inside MPI_Wait) ends
// below the leaf being filled: the rank keeps it for an INSERT after its pages, and still encodes
// them.
TEST(TracePages, ACallThatMadeManyCallsGoesInAfterTheRanksPages) {
  const fs::path directory = fresh_directory("trace-pages-long-nested-calls");
  constexpr int kOuterCalls = 20, kInnerCalls = 1000;
  record_rank_with(directory, 0, 1,
                   [](Profiler& profiler) { record_nested_calls(profiler, kOuterCalls, kInnerCalls); });
  const std::vector<RankTracePages::Report> reports = encode_trace_pages_in(directory.string());
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].calls, static_cast<std::uint64_t>(kOuterCalls * (1 + kInnerCalls)));
  {
    const SqliteDatabase rank_file((directory / rank_database_name(0)).string(), SQLITE_OPEN_READONLY);
    EXPECT_EQ(rank_file.query_int64("SELECT count(*) FROM trace_pages_late_calls"), kOuterCalls);
  }
  const Merges merges = merge_both_ways(directory);
  EXPECT_EQ(merges.copied.trace_pages_ranks, (std::vector<int>{0}));
  expect_same_trace(merges);
}

// Rank 1 never encoded (it crashed first), rank 2's pages are on another clock map, rank 3's of
// another page size, rank 4's tiles of other widths and rank 5's pages file is gone: those go
// through decoding, in the same merge as rank 0's copied pages.
TEST(TracePages, MissingOrStalePagesFallBackToDecoding) {
  const fs::path directory = fresh_directory("trace-pages-stale");
  for (int rank = 0; rank < 6; ++rank) {
    record_rank(directory, rank, 6, 1500 + 500 * rank);
  }
  encode_trace_pages_in(directory.string());
  const auto rank_file = [&](int rank) { return (directory / rank_database_name(rank)).string(); };
  const auto change = [&](int rank, const std::string& sql) {
    SqliteDatabase(rank_file(rank), SQLITE_OPEN_READWRITE).exec(sql);
  };
  change(1, "DROP TABLE trace_pages");
  change(2, "UPDATE trace_pages SET clock_shift_ns = clock_shift_ns + 1");
  change(3, "UPDATE trace_pages SET page_size = 2 * page_size");
  change(4, "UPDATE timeline_tile_levels SET tile_ns = 2 * tile_ns WHERE level = 0");
  fs::remove(trace_pages_path(rank_file(5)));
  testing::internal::CaptureStderr();
  const Merges merges = merge_both_ways(directory);
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(merges.copied.trace_pages_ranks, (std::vector<int>{0}));
  // Pages that do not fit are named with the reason; a rank that never encoded is not.
  for (const char* said : {"rank 2: its trace pages are not copied (encoded on another clock map)",
                           "rank 3: its trace pages are not copied (pages of another size)",
                           "rank 4: its trace pages are not copied (tiles of other widths)",
                           "rank 5: its trace pages are not copied (its pages file is missing"}) {
    EXPECT_NE(warnings.find(said), std::string::npos) << warnings;
  }
  EXPECT_EQ(warnings.find("rank 1:"), std::string::npos) << warnings;
  EXPECT_TRUE(merges.copied.missing_ranks.empty());
  expect_same_trace(merges);
}

// A rank file whose chunks changed after its pages were encoded (more were appended).
TEST(TracePages, PagesOfOtherChunksAreNotCopied) {
  const fs::path directory = fresh_directory("trace-pages-other-chunks");
  record_rank(directory, 0, 1, 800);
  encode_trace_pages_in(directory.string());
  SqliteDatabase(fs::path(directory / rank_database_name(0)).string(), SQLITE_OPEN_READWRITE)
      .exec("INSERT INTO trace_chunks (thread, count, records) SELECT thread, 0, x'' FROM trace_chunks LIMIT "
            "1");
  const Merges merges = merge_both_ways(directory);
  EXPECT_TRUE(merges.copied.trace_pages_ranks.empty());
  expect_same_trace(merges);
}

// A rank starting over an earlier run's files removes that run's pages with its file.
TEST(TracePages, AnEarlierRunsPagesGoWithItsRankFile) {
  const fs::path directory = fresh_directory("trace-pages-earlier-run");
  record_rank(directory, 0, 1, 100);
  encode_trace_pages_in(directory.string());
  const std::string pages = trace_pages_path((directory / rank_database_name(0)).string());
  ASSERT_TRUE(fs::exists(pages));
  record_rank_with(directory, 0, 1, [&](Profiler&) { EXPECT_FALSE(fs::exists(pages)); });
}

} // namespace
