// Merging rank files: one database, every rank on rank 0's timeline, clear errors on bad input.
#include "commlens/profiler/event_codec.hpp"
#include "commlens/profiler/job_registry.hpp"
#include "commlens/profiler/merge.hpp"
#include "commlens/profiler/profiler.hpp"
#include "commlens/profiler/sqlite.hpp"

#include "rank_store.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace commlens;

const std::vector<FunctionDescription> kFunctions = {{"MPI_Unused", "none"}, {"MPI_Barrier", "collective"}};

// Rank `rank` of a two-rank trace run writing into `directory`, its clock `offset_ns` from rank 0's.
Profiler* start_rank(const fs::path& directory, int rank, std::int64_t offset_ns) {
  Config config;
  config.output_directory = directory.string();
  config.mode = Mode::Trace;
  Profiler* profiler = Profiler::start(config, ProcessIdentity{rank, 2, "host", 10 + rank}, kFunctions);
  if (profiler != nullptr) {
    profiler->set_run_value("world_size", "2");
    profiler->set_clock_alignment(ClockAlignment{offset_ns, 0.0});
  }
  return profiler;
}

void run_rank(const fs::path& directory, int rank, int calls, std::int64_t offset_ns) {
  Profiler* profiler = start_rank(directory, rank, offset_ns);
  ASSERT_NE(profiler, nullptr);
  for (int i = 0; i < calls; ++i) {
    ThreadRecorder* recorder = profiler->thread_recorder();
    EventRecord record{};
    record.start_ticks = now_ticks();
    record.end_ticks = record.start_ticks;
    record.call_id = recorder->next_call_id();
    record.function = 1;
    record.peer = kNoPeer;
    record.tag_or_root = kNoTagOrRoot;
    record.communicator_index = kNoCommunicator;
    recorder->record_call(record, 0);
  }
  profiler->stop();
}

// Offsets are measured at MPI_Finalize: a rank that crashed has none. On rank 0's host offset 0
// is right (one CLOCK_MONOTONIC); on another host the merge says its times are not aligned.
TEST(Merge, NamesTheRanksOnAnotherHostThatNeverFinalized) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-unaligned";
  fs::remove_all(directory);
  run_rank(directory, 0, 5, 0);
  run_rank(directory, 1, 5, 0);
  const auto crash = [&](const std::string& host) {
    SqliteDatabase rank_file((directory / rank_database_name(1)).string(), SQLITE_OPEN_READWRITE);
    rank_file.prepare("UPDATE ranks SET finalized = 0, finalize_ns = NULL, host = ?").bind(1, host).run();
  };
  crash("host");
  const MergeOptions options{directory.string(), "", nullptr};
  EXPECT_TRUE(merge_rank_databases(options).unaligned_ranks.empty()) << "rank 0's host: one clock";
  crash("another-host");
  testing::internal::CaptureStderr();
  const MergeResult result = merge_rank_databases(options);
  const std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_EQ(result.unaligned_ranks, (std::vector<int>{1}));
  EXPECT_NE(warning.find("ranks 1 never finalized"), std::string::npos) << warning;
  SqliteDatabase db(result.output_path, SQLITE_OPEN_READONLY);
  auto stored = db.prepare("SELECT value FROM run WHERE key = 'unaligned_ranks'");
  ASSERT_TRUE(stored.step());
  EXPECT_EQ(stored.column_text(0), "1");
}

TEST(Merge, CombinesEveryRankAndShiftsTimesByTheMeasuredOffset) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-two";
  fs::remove_all(directory);
  run_rank(directory, 0, 10, 0);
  // Rank 1's clock reads 1 s ahead of rank 0's: its merged times must come out ~1 s earlier.
  run_rank(directory, 1, 20, 1'000'000'000);
  const MergeResult result = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  EXPECT_EQ(result.world_size, 2);
  EXPECT_EQ(result.merged_ranks, (std::vector<int>{0, 1}));
  EXPECT_TRUE(result.missing_ranks.empty());
  EXPECT_EQ(result.calls, 30u);
  SqliteDatabase db(result.output_path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls WHERE rank = 1"), 20);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM ranks"), 2);
  // Merged times of rank 1 = its own times + its init - the offset - rank 0's init (both inits on
  // the one machine clock here); rank 0's times are unchanged.
  // A rank file holds its trace as chunks: merged alone, its times stay on its own timeline.
  const auto first_in_rank_file = [&](int rank) {
    const fs::path alone = directory.string() + "-alone-" + std::to_string(rank);
    fs::remove_all(alone);
    fs::create_directories(alone);
    fs::copy_file(directory / rank_database_name(rank), alone / rank_database_name(rank));
    SqliteDatabase file(merge_rank_databases(MergeOptions{alone.string(), "", nullptr}).output_path,
                        SQLITE_OPEN_READONLY);
    return file.query_int64("SELECT min(start_ns) FROM mpi_calls");
  };
  const std::int64_t shift = db.query_int64("SELECT init_ns FROM ranks WHERE rank = 1") - 1'000'000'000 -
                             db.query_int64("SELECT init_ns FROM ranks WHERE rank = 0");
  EXPECT_EQ(db.query_int64("SELECT min(start_ns) FROM mpi_calls WHERE rank = 1"),
            first_in_rank_file(1) + shift);
  EXPECT_EQ(db.query_int64("SELECT min(start_ns) FROM mpi_calls WHERE rank = 0"), first_in_rank_file(0));
  // The calls have no index (each cost 12 to 20 bytes a call): time seeks go through the call ids.
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name IN "
                           "('mpi_calls', 'mpi_call_rows')"),
            0);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_call_rows"), 30);
  // The timeline's level-of-detail tiles (tests/analysis/timeline_tiles_test.cpp checks them in
  // depth): every level counts every call once.
  const auto levels = db.query_int64("SELECT count(*) FROM timeline_tile_levels");
  EXPECT_GE(levels, 1);
  EXPECT_EQ(db.query_int64("SELECT sum(calls) FROM timeline_tiles"), 30 * levels);
}

// The CUDA collector's API calls (cuda_api_calls) and their functions' catalogue, as it stores them:
// rank 0 three calls of two functions, rank 1 two calls, one of a function rank 0 never called.
TEST(Merge, KeepsEveryRanksCudaApiCallsAndOneCatalogueOfTheirFunctions) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-cuda-api";
  fs::remove_all(directory);
  const auto record = [&](int rank, std::int64_t offset_ns, std::vector<std::vector<SqlValue>> functions,
                          std::vector<std::vector<SqlValue>> calls) {
    Profiler* profiler = start_rank(directory, rank, offset_ns);
    ASSERT_NE(profiler, nullptr);
    profiler->store_rows("INSERT OR IGNORE INTO cuda_api_functions (id, domain, name) VALUES (?,?,?)",
                         std::move(functions));
    profiler->store_rows("INSERT INTO cuda_api_calls (rank, thread, system_thread, start_ns, end_ns, "
                         "function_id, correlation_id) VALUES (?,?,?,?,?,?,?)",
                         std::move(calls));
    profiler->stop();
  };
  const std::vector<SqlValue> launch{std::int64_t{211}, std::string("runtime"),
                                     std::string("cudaLaunchKernel")};
  const std::vector<SqlValue> copy{std::int64_t{65536 + 24}, std::string("driver"),
                                   std::string("cuMemcpyHtoD_v2")};
  const std::vector<SqlValue> sync{std::int64_t{131}, std::string("runtime"),
                                   std::string("cudaStreamSynchronize")};
  const auto call = [](std::int64_t rank, SqlValue thread, std::int64_t start_ns, std::int64_t function,
                       std::int64_t correlation) {
    return std::vector<SqlValue>{
        rank, std::move(thread), std::int64_t{4000} + rank, start_ns, start_ns + 500, function, correlation};
  };
  record(0, 0, {launch, copy},
         {call(0, std::int64_t{0}, 1000, 211, 1), call(0, std::int64_t{0}, 2000, 211, 2),
          call(0, SqlValue{}, 3000, 65536 + 24, 3)});
  // Rank 1's clock reads 1 s ahead of rank 0's: its merged times come out 1 s earlier (the inits
  // of both ranks are on this one machine clock, so the rest of the shift is their difference).
  record(1, 1'000'000'000, {launch, sync},
         {call(1, std::int64_t{0}, 5000, 211, 7), call(1, std::int64_t{1}, 6000, 131, 8)});
  const MergeResult result = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  SqliteDatabase db(result.output_path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM cuda_api_calls WHERE rank = 0"), 3);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM cuda_api_calls WHERE rank = 1"), 2);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM cuda_api_calls WHERE rank = 0 AND thread IS NULL"), 1);
  EXPECT_EQ(db.query_int64("SELECT sum(correlation_id) FROM cuda_api_calls WHERE rank = 1"), 15);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM cuda_api_functions"), 3) << "one row per function";
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM cuda_api_calls c JOIN cuda_api_functions f ON "
                           "f.id = c.function_id WHERE f.name = 'cudaLaunchKernel'"),
            3);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM cuda_api_calls c JOIN cuda_api_functions f ON "
                           "f.id = c.function_id WHERE f.name = 'cuMemcpyHtoD_v2' AND f.domain = 'driver' "
                           "AND c.rank = 0 AND c.system_thread = 4000"),
            1);
  EXPECT_EQ(db.query_int64("SELECT start_ns FROM cuda_api_calls WHERE rank = 0 AND correlation_id = 1"), 1000)
      << "rank 0's times stay";
  const std::int64_t shift = db.query_int64("SELECT init_ns FROM ranks WHERE rank = 1") - 1'000'000'000 -
                             db.query_int64("SELECT init_ns FROM ranks WHERE rank = 0");
  EXPECT_EQ(db.query_int64("SELECT start_ns FROM cuda_api_calls WHERE rank = 1 AND correlation_id = 7"),
            5000 + shift);
  EXPECT_EQ(
      db.query_int64("SELECT end_ns - start_ns FROM cuda_api_calls WHERE rank = 1 AND correlation_id = 8"),
      500);
}

TEST(Merge, CountsTheRanksOfARegisteredJobWithoutRankFilesAsMissing) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-spawned";
  fs::remove_all(directory);
  run_rank(directory, 0, 1, 0);
  run_rank(directory, 1, 1, 0);
  claim_job(directory.string(), 2, false, "host", 10);
  claim_job(directory.string(), 3, true, "host", 12); // spawned, never wrote a file
  const MergeResult result = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  EXPECT_EQ(result.world_size, 5);
  EXPECT_EQ(result.jobs, 2);
  EXPECT_EQ(result.missing_ranks, (std::vector<int>{2, 3, 4}));
  SqliteDatabase db(result.output_path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM jobs WHERE job = 1 AND first_rank = 2 AND size = 3"), 1);
}

TEST(Merge, ReportsMissingRanksAndSkipsUnreadableFiles) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-missing";
  fs::remove_all(directory);
  run_rank(directory, 0, 3, 0);
  {
    std::ofstream(directory / "rank-00001.sqlite") << "this is not a database at all, just some text........";
  }
  testing::internal::CaptureStderr();
  const MergeResult result = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(result.merged_ranks, (std::vector<int>{0}));
  EXPECT_EQ(result.missing_ranks, (std::vector<int>{1}));
  EXPECT_NE(warnings.find("rank-00001.sqlite"), std::string::npos);
}

std::set<std::string> files_in(const fs::path& directory) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

MergeOptions options_removing_rank_files(const fs::path& directory, bool remove) {
  MergeOptions options{directory.string(), "", nullptr};
  options.remove_rank_files = remove;
  return options;
}

TEST(Merge, LeavesOnlyTheMergedDatabaseWhenRankFilesAreNotKept) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-tidy";
  fs::remove_all(directory);
  run_rank(directory, 0, 3, 0);
  run_rank(directory, 1, 3, 0);
  const MergeResult result = merge_rank_databases(options_removing_rank_files(directory, true));
  EXPECT_TRUE(result.rank_files_removed);
  EXPECT_EQ(files_in(directory), (std::set<std::string>{"commlens.sqlite"}));
}

TEST(Merge, KeptRankFilesHaveNoWalOrShmFilesBeside) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-keep";
  fs::remove_all(directory);
  run_rank(directory, 0, 3, 0);
  run_rank(directory, 1, 3, 0);
  const MergeResult result = merge_rank_databases(options_removing_rank_files(directory, false));
  EXPECT_FALSE(result.rank_files_removed);
  EXPECT_EQ(files_in(directory),
            (std::set<std::string>{"commlens.sqlite", "rank-00000.sqlite", "rank-00001.sqlite"}));
}

TEST(Merge, KeepsTheRankFilesOfARunWithAMissingRank) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-keep-missing";
  fs::remove_all(directory);
  run_rank(directory, 0, 3, 0); // world size 2: rank 1 never wrote its file
  const MergeResult result = merge_rank_databases(options_removing_rank_files(directory, true));
  EXPECT_EQ(result.missing_ranks, (std::vector<int>{1}));
  EXPECT_FALSE(result.rank_files_removed);
  EXPECT_EQ(files_in(directory), (std::set<std::string>{"commlens.sqlite", "rank-00000.sqlite"}));
  EXPECT_EQ(describe_losses(result), "data lost: 1 of 2 ranks missing");
}

TEST(Merge, SumsWhatEveryRankLostAndSaysItInOneLine) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-losses";
  fs::remove_all(directory);
  run_rank(directory, 0, 3, 0);
  run_rank(directory, 1, 3, 0);
  for (int rank = 0; rank < 2; ++rank) {
    SqliteDatabase file((directory / rank_database_name(rank)).string(), SQLITE_OPEN_READWRITE);
    file.exec(rank == 0 ? "UPDATE ranks SET dropped_events = 3"
                        : "UPDATE ranks SET dropped_events = 4, "
                          "summary_overflow = 5");
  }
  const MergeResult result = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  EXPECT_EQ(result.dropped_events, 7u);
  EXPECT_EQ(result.summary_overflow, 5u);
  EXPECT_EQ(describe_losses(result),
            "data lost: 7 trace events dropped, 5 calls not counted (summary table full)");
  run_rank(directory, 0, 3, 0);
  run_rank(directory, 1, 3, 0);
  EXPECT_EQ(describe_losses(merge_rank_databases(MergeOptions{directory.string(), "", nullptr})), "");
}

// The merged file gets its name only once complete: a merge that dies half way (here: the process
// exits after the first of two ranks) leaves no commlens.sqlite that a user could take for a whole
// run, and the next merge starts afresh.
TEST(Merge, AMergeThatDiesLeavesNoMergedFile) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-dies";
  fs::remove_all(directory);
  run_rank(directory, 0, 300, 0);
  run_rank(directory, 1, 300, 0);
  MergeOptions options{directory.string(), "", [](int done, int) {
                         if (done == 1)
                           std::_Exit(3);
                       }};
  EXPECT_EXIT(merge_rank_databases(options), testing::ExitedWithCode(3), "");
  EXPECT_FALSE(fs::exists(directory / "commlens.sqlite"));
  EXPECT_TRUE(fs::exists(directory / "rank-00001.sqlite"));
  const MergeResult result = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  EXPECT_EQ(result.calls, 600u);
  EXPECT_EQ(files_in(directory),
            (std::set<std::string>{"commlens.sqlite", "rank-00000.sqlite", "rank-00001.sqlite"}));
}

TEST(Merge, AFailedMergeLeavesNoFileBehind) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-fails";
  fs::remove_all(directory);
  run_rank(directory, 0, 3, 0);
  run_rank(directory, 1, 3, 0);
  MergeOptions options{directory.string(), "", [](int, int) { throw std::runtime_error("interrupted"); }};
  EXPECT_THROW(merge_rank_databases(options), std::runtime_error);
  EXPECT_EQ(files_in(directory), (std::set<std::string>{"rank-00000.sqlite", "rank-00001.sqlite"}));
}

TEST(Merge, EmptyDirectoryIsAClearError) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-empty";
  fs::remove_all(directory);
  fs::create_directories(directory);
  try {
    merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
    FAIL() << "expected a MergeError";
  } catch (const MergeError& error) {
    EXPECT_NE(std::string(error.what()).find("no rank files"), std::string::npos);
  }
}

} // namespace

namespace {

// The catalogue of a one-rank run that calls MPI_Send (function 1) with MPI_INT (datatype 1).
void write_send_catalog(RankStore& store, const TickConverter& clock) {
  store.write_catalog({{"MPI_Unused", "none"}, {"MPI_Send", "p2p", TagOrRoot::Tag}}, {"MPI_INT"},
                      ProcessIdentity{0, 1, "host", 7}, 5'000'000'000, clock);
}

// `count` MPI_Send records from call id `first_id` on, at 2 ticks per ns 1000 ns apart (the first
// call at init), 200 ticks long, 4 * (id - 1) bytes each, tag 42, datatype 1.
ChunkEncoder send_records(std::uint64_t first_id, std::uint64_t count) {
  ChunkEncoder encoder;
  for (std::uint64_t id = first_id; id < first_id + count; ++id) {
    EventRecord record{};
    record.start_ticks = 2000 * id - 1000;
    record.end_ticks = record.start_ticks + 200;
    record.call_id = id;
    record.bytes_sent = 4 * (id - 1);
    record.peer = 0;
    record.tag_or_root = 42;
    record.function = 1;
    record.datatype = 1;
    record.communicator_index = kNoCommunicator;
    encoder.append(record);
  }
  return encoder;
}

// A rank killed in the middle of a flush: its rank file keeps the journal of that flush, whose
// pages already reached the file. The merge must roll the flush back (keeping every flush that
// committed, and nothing of the cut one) and leave no journal behind.
TEST(Merge, RollsBackAFlushAKilledRankLeftUnfinished) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-killed-flush";
  fs::remove_all(directory);
  fs::create_directories(directory);
  const fs::path rank_file = directory / rank_database_name(0);
  const pid_t child = fork();
  if (child == 0) {
    RankStore store(rank_file.string(), 0);
    write_send_catalog(store, TickConverter(1000, 5'000'000'000, 0.5));
    const ChunkEncoder committed = send_records(1, 10);
    store.begin();
    store.insert_chunk(0, committed.count(), committed.bytes());
    store.commit();
    // Far more than SQLite's page cache, so the flush's pages are written into the file before
    // its commit, with their old contents in the journal.
    store.begin();
    for (std::uint64_t chunk = 0; chunk < 64; ++chunk) {
      const ChunkEncoder cut = send_records(11 + chunk * 4096, 4096);
      store.insert_chunk(0, cut.count(), cut.bytes());
    }
    _exit(0); // killed before the commit
  }
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_TRUE(fs::exists(rank_file.string() + "-journal")) << "the killed flush left no journal";

  const MergeResult result = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  EXPECT_EQ(result.calls, 10u);
  SqliteDatabase db(result.output_path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls"), 10);
  EXPECT_EQ(db.query_int64("SELECT sum(bytes_sent) FROM mpi_calls"), 4 * 45); // ids 1 to 10
  for (const auto& entry : fs::directory_iterator(directory)) {
    EXPECT_EQ(entry.path().string().find("-journal"), std::string::npos) << entry.path();
  }
}

// A rank killed before its writer turned chunks into rows: the merge must do it.
TEST(Merge, TurnsChunksALostRankLeftBehindIntoRows) {
  const fs::path directory = fs::path(testing::TempDir()) / "merge-chunks";
  fs::remove_all(directory);
  fs::create_directories(directory);
  const TickConverter clock(1000, 5'000'000'000, 0.5); // 2 ticks per ns
  {
    RankStore store((directory / rank_database_name(0)).string(), 0);
    write_send_catalog(store, clock);
    const ChunkEncoder encoder = send_records(1, 10);
    store.begin();
    store.insert_chunk(0, encoder.count(), encoder.bytes());
    store.commit();
    store.close();
  }
  const MergeResult result = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  EXPECT_EQ(result.calls, 10u);
  SqliteDatabase db(result.output_path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int64("SELECT sum(bytes_sent) FROM mpi_calls"), 4 * 45);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls WHERE tag = 42 AND datatype = 1"), 10);
  EXPECT_EQ(db.query_int64("SELECT start_ns FROM mpi_calls WHERE id = 4"), 3000);
  EXPECT_EQ(db.query_int64("SELECT end_ns - start_ns FROM mpi_calls WHERE id = 4"), 100);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM trace_chunks"), 0);
}

} // namespace
