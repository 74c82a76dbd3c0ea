// The merge as a tree (merge_parts.hpp): rank files spread over folders, merged into parts by the
// folders' leaders, parts sent to other folders under new names and merged into parts and finally
// into the run's database, must give the database the one-process merge of all the rank files
// gives (every trace and summary table, both ways round, and PRAGMA integrity_check), whichever
// folder holds which ranks; ranks whose pages are missing are encoded by their leader; a part that
// cannot be read leaves its ranks behind, named with their folder.
#include "commlens/profiler/merge.hpp"
#include "commlens/profiler/merge_parts.hpp"
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

constexpr int kRanks = 6;

// The run's ranks, recorded into `all`; with `encode`, each encodes its pages as at MPI_Finalize.
JobTimeline record_run(const fs::path& all, Mode mode, bool encode) {
  for (int rank = 0; rank < kRanks; ++rank) {
    // A run value that differs between ranks: the merged file holds rank 0's, whatever order the
    // parts came in.
    const auto body = [rank](Profiler& profiler) {
      profiler.set_run_value("start_time_utc", fmt::format("rank {}'s start", rank));
      record_steps(profiler, 300 + 200 * rank);
    };
    record_rank_with(all, rank, kRanks, body, mode);
  }
  JobTimeline timeline;
  timeline.origin_ns = rank_clock_origin_ns((all / rank_database_name(0)).string(), 0);
  if (mode == Mode::Trace) {
    TraceExtentTotals totals;
    for (int rank = 0; rank < kRanks; ++rank) {
      totals.add(RankTracePages((all / rank_database_name(rank)).string(), rank).extent(timeline.origin_ns));
    }
    timeline.tile_widths = totals.tile_widths();
  }
  if (encode) {
    encode_trace_pages_in(all.string());
  }
  return timeline;
}

// A run recorded in <test folder>/all, and the timeline its ranks agreed on.
struct RecordedRun {
  RecordedRun(const std::string& name, Mode mode, bool encode)
      : base(fresh_directory(name)), all(base / "all"), timeline(record_run(all, mode, encode)) {}
  fs::path base, all;
  JobTimeline timeline;
};

// Copies rank `rank`'s files from `all` into `folder`.
void copy_rank(const fs::path& all, int rank, const fs::path& folder) {
  fs::create_directories(folder);
  for (const char* suffix : {"", "-pages"}) {
    const fs::path file = all / (rank_database_name(rank) + suffix);
    if (fs::exists(file)) {
      fs::copy_file(file, folder / file.filename(), fs::copy_options::overwrite_existing);
    }
  }
}

MergeSources folder_of(const fs::path& folder, const std::vector<int>& ranks) {
  return MergeSources{folder.string(), ranks, "node:" + folder.string(), {}, {}};
}

// The one-process merge of every rank file in `all`.
MergeResult merge_in_one_process(const fs::path& all) {
  return merge_rank_databases(MergeOptions{all.string(), (all / "flat.sqlite").string(), nullptr});
}

// Every table of the two files holds the same rows, both ways round (the run values that say
// which merge wrote them aside).
void expect_same_database(const std::string& tree, const std::string& flat) {
  SqliteDatabase db(tree, SQLITE_OPEN_READONLY);
  EXPECT_EQ(integrity(db), "ok");
  db.prepare("ATTACH DATABASE ? AS flat").bind(1, flat).run();
  for (const char* table : {"mpi_calls", "mpi_requests", "mpi_call_rows", "mpi_request_rows",
                            "timeline_tiles", "timeline_tile_levels", "call_stats", "thread_stats", "ranks",
                            "communicators", "phases", "functions"}) {
    EXPECT_EQ(rows_differing(db, fmt::format("main.{}", table), fmt::format("flat.{}", table)), 0) << table;
  }
  // A leader that encodes a rank's pages adds the rank's 'trace_pages' row.
  EXPECT_EQ(rows_differing(db, "(SELECT * FROM main.profiler_overhead WHERE component != 'trace_pages')",
                           "(SELECT * FROM flat.profiler_overhead WHERE component != 'trace_pages')"),
            0);
  EXPECT_EQ(rows_differing(db, "(SELECT * FROM main.run WHERE key NOT IN ('trace_pages_ranks'))",
                           "(SELECT * FROM flat.run WHERE key NOT IN ('trace_pages_ranks'))"),
            0);
}

// What a leader does with a part another folder sent it over MPI: its files stored in `folder`
// under names of its own, the part renamed to list them. Returns the part's new path.
std::string receive_part(const std::string& part, const fs::path& folder, const std::string& prefix) {
  std::map<std::string, std::string> renamed;
  int index = 0;
  for (const std::string& file : part_files(part)) {
    const std::string name = fmt::format("{}-{}", prefix, index++);
    fs::copy_file(file, folder / name);
    renamed[fs::path(file).filename().string()] = name;
  }
  const std::string received = (folder / fmt::format("{}-0", prefix)).string();
  rename_part_pages(received, renamed);
  return received;
}

// Three folders holding ranks {0, 3}, {1, 4}, {2, 5} (ranks dealt round-robin to nodes), as three
// nodes that share no folder: folder 2 makes a part and sends it to folder 1, which merges its own
// ranks into it (the part it received becomes its part, as the largest source) and sends that to
// folder 0, which merges its ranks into it, making the database. Each sender's folder is gone
// before its part is read.
MergeResult merge_as_tree(const fs::path& base, const fs::path& all, const JobTimeline& timeline) {
  std::vector<fs::path> folders;
  for (int node = 0; node < 3; ++node) {
    folders.push_back(base / fmt::format("node{}", node));
    copy_rank(all, node, folders.back());
    copy_rank(all, node + 3, folders.back());
  }
  const std::string part2 = (folders[2] / "part.sqlite").string();
  const PartContents two = merge_into_part(folder_of(folders[2], {2, 5}), timeline, part2);
  EXPECT_EQ(two.ranks, (std::vector<int>{2, 5}));
  MergeSources one = folder_of(folders[1], {1, 4});
  one.parts.push_back(PartSource{receive_part(part2, folders[1], "from-node2"), {{{2, 5}, "node2"}}});
  fs::remove_all(folders[2]);
  const std::string part1 = (folders[1] / "part.sqlite").string();
  EXPECT_EQ(merge_into_part(one, timeline, part1).ranks, (std::vector<int>{1, 2, 4, 5}));
  MergeSources zero = folder_of(folders[0], {0, 3});
  zero.parts.push_back(PartSource{receive_part(part1, folders[0], "from-node1"), {{{1, 2, 4, 5}, "node1"}}});
  fs::remove_all(folders[1]);
  return merge_into_database(zero, timeline, MergeOptions{folders[0].string(), "", nullptr});
}

TEST(MergeParts, ATreeOfPartsGivesTheDatabaseOfTheOneProcessMerge) {
  const RecordedRun run("merge-parts-trace", Mode::Trace, true);
  const MergeResult tree = merge_as_tree(run.base, run.all, run.timeline);
  const MergeResult flat = merge_in_one_process(run.all);
  EXPECT_EQ(tree.merged_ranks, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(tree.missing_ranks.empty());
  EXPECT_TRUE(tree.rows_as_pages);
  EXPECT_EQ(tree.trace_pages_ranks, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(tree.calls, flat.calls);
  EXPECT_GT(tree.calls, 0u);
  expect_same_database(tree.output_path, flat.output_path);
}

// No rank encoded its pages (COMMLENS_RANK_PAGES=0): each folder's leader encodes them (before
// sending its part), and the run value lists no rank as having encoded its own.
TEST(MergeParts, RanksWithoutPagesAreEncodedByTheirFoldersLeader) {
  const RecordedRun run("merge-parts-unencoded", Mode::Trace, false);
  const MergeResult tree = merge_as_tree(run.base, run.all, run.timeline);
  EXPECT_TRUE(tree.rows_as_pages);
  EXPECT_TRUE(tree.trace_pages_ranks.empty());
  EXPECT_EQ(tree.calls, merge_in_one_process(run.all).calls);
  expect_same_database(tree.output_path, merge_in_one_process(run.all).output_path);
}

TEST(MergeParts, SummaryRunsMergeAsATreeToo) {
  const RecordedRun run("merge-parts-summary", Mode::Summary, false);
  const MergeResult tree = merge_as_tree(run.base, run.all, run.timeline);
  EXPECT_EQ(tree.merged_ranks.size(), static_cast<std::size_t>(kRanks));
  EXPECT_FALSE(tree.rows_as_pages);
  EXPECT_EQ(tree.calls, 0u);
  expect_same_database(tree.output_path, merge_in_one_process(run.all).output_path);
}

// A part that never arrived whole, and a rank file that is not there: their ranks are missing,
// each named with the folder its files stay in; the others are merged.
TEST(MergeParts, RanksThatCannotBeMergedAreLeftBehindWithTheirFolder) {
  const RecordedRun run("merge-parts-left-behind", Mode::Trace, true);
  const fs::path node0 = run.base / "node0";
  copy_rank(run.all, 0, node0);
  copy_rank(run.all, 1, node0);
  MergeSources zero = folder_of(node0, {0, 1, 2});
  zero.parts.push_back(
      PartSource{(run.base / "node1" / "part.sqlite").string(), {{{3, 4}, "node1:/scratch"}}});
  zero.left_behind.push_back(RanksLeftBehind{{5}, "node2:/scratch"});
  testing::internal::CaptureStderr();
  const MergeResult tree = merge_into_database(zero, run.timeline, MergeOptions{node0.string(), "", nullptr});
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(tree.merged_ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(tree.missing_ranks, (std::vector<int>{2, 3, 4, 5}));
  ASSERT_EQ(tree.left_behind.size(), 3u);
  EXPECT_EQ(tree.left_behind[0].ranks, (std::vector<int>{2}));
  EXPECT_EQ(tree.left_behind[0].place, "node:" + node0.string());
  EXPECT_EQ(tree.left_behind[1].ranks, (std::vector<int>{3, 4}));
  EXPECT_EQ(tree.left_behind[1].place, "node1:/scratch");
  EXPECT_EQ(tree.left_behind[2].ranks, (std::vector<int>{5}));
  EXPECT_NE(warnings.find(rank_database_name(2)), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("part.sqlite"), std::string::npos) << warnings;
  SqliteDatabase db(tree.output_path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(integrity(db), "ok");
  auto missing = db.prepare("SELECT value FROM run WHERE key = 'missing_ranks'");
  ASSERT_TRUE(missing.step());
  EXPECT_EQ(missing.column_text(0), "2,3,4,5");
}

} // namespace
