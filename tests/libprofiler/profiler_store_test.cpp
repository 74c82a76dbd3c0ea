// The core end to end without MPI: threads record calls, the writer stores them as trace chunks
// in the rank file, and the merged file holds exactly what was recorded.
#include "commlens/profiler/merge.hpp"
#include "commlens/profiler/own_time.hpp"
#include "commlens/profiler/profiler.hpp"
#include "commlens/profiler/schema.hpp"
#include "commlens/profiler/sqlite.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace commlens;

const std::vector<FunctionDescription> kFunctions = {
    {"MPI_Unused", "none", TagOrRoot::None},
    {"MPI_Send", "p2p", TagOrRoot::Tag},
    {"MPI_Bcast", "collective", TagOrRoot::Root},
};

fs::path fresh_directory(const std::string& name) {
  const fs::path directory = fs::path(testing::TempDir()) / name;
  fs::remove_all(directory);
  return directory;
}

Profiler* start_profiler(const fs::path& directory, Mode mode, int rank) {
  Config config;
  config.output_directory = directory.string();
  config.mode = mode;
  config.flush_interval_ms = 20;
  return Profiler::start(config, ProcessIdentity{rank, 2, "testhost", 1000 + rank}, kFunctions);
}

// One trace-mode process (rank 0 of 1) with rings of `buffer_events` records.
Profiler* start_small_rings(const fs::path& directory, std::size_t buffer_events,
                            std::uint32_t flush_interval_ms) {
  Config config;
  config.output_directory = directory.string();
  config.mode = Mode::Trace;
  config.buffer_events = buffer_events;
  config.flush_interval_ms = flush_interval_ms;
  return Profiler::start(config, ProcessIdentity{0, 1, "testhost", 1000}, kFunctions);
}

// The rank file holds the trace as chunks; the merge turns them into rows.
std::string merged(const fs::path& directory) {
  return merge_rank_databases(MergeOptions{directory.string(), "", nullptr}).output_path;
}

void record_send(Profiler& profiler, std::uint32_t communicator, int peer, std::uint64_t bytes, int tag) {
  ThreadRecorder* recorder = profiler.thread_recorder();
  EventRecord record{};
  record.start_ticks = now_ticks();
  record.call_id = recorder->next_call_id();
  record.bytes_sent = bytes;
  record.communicator_index = communicator;
  record.peer = peer;
  record.tag_or_root = tag;
  record.function = 1;
  record.kind = RecordKind::Call;
  record.location = BufferLocation::Host;
  record.end_ticks = now_ticks();
  if (recorder->record_call(record, profiler.phase())) {
    profiler.wake_writer();
  }
}

TEST(ProfilerStore, StoresEveryCallFromEveryThreadInTraceMode) {
  const fs::path directory = fresh_directory("store-trace");
  Profiler* profiler = start_profiler(directory, Mode::Trace, 0);
  ASSERT_NE(profiler, nullptr);
  CommunicatorInfo world;
  world.id = 0;
  world.name = "MPI_COMM_WORLD";
  world.members = {0, 1};
  const std::uint32_t world_index = profiler->communicators().add(world);

  constexpr int kThreads = 4;
  constexpr int kCallsPerThread = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        record_send(*profiler, world_index, 1, 100 + t, t);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  profiler->begin_next_phase(2);
  record_send(*profiler, world_index, 1, 4096, 9);
  const std::string path = profiler->stop();
  {
    SqliteDatabase rank_file(path, SQLITE_OPEN_READONLY);
    EXPECT_EQ(rank_file.query_int64("SELECT count(*) FROM mpi_calls"), 0);
    EXPECT_EQ(rank_file.query_int64("SELECT sum(count) FROM trace_chunks"), kThreads * kCallsPerThread + 1);
  }

  SqliteDatabase db(merged(directory), SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int64("PRAGMA user_version"), schema::kVersion);
  EXPECT_EQ(db.query_int64("PRAGMA application_id"), schema::kApplicationId);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls"), kThreads * kCallsPerThread + 1);
  EXPECT_EQ(db.query_int64("SELECT count(DISTINCT thread) FROM mpi_calls"), kThreads + 1);
  EXPECT_EQ(db.query_int64("SELECT count(DISTINCT id) FROM mpi_calls"), kThreads * kCallsPerThread + 1);
  EXPECT_EQ(db.query_int64("SELECT sum(bytes_sent) FROM mpi_calls WHERE phase = 0"),
            kCallsPerThread * (100 + 101 + 102 + 103));
  EXPECT_EQ(db.query_int64("SELECT tag FROM mpi_calls WHERE phase = 1"), 9);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls WHERE root IS NOT NULL"), 0);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls WHERE end_ns < start_ns"), 0);
  // The summary agrees with the trace.
  EXPECT_EQ(db.query_int64("SELECT sum(count) FROM call_stats"), kThreads * kCallsPerThread + 1);
  EXPECT_EQ(db.query_int64("SELECT sum(count) FROM call_stats WHERE size_bin = 6"),
            kThreads * kCallsPerThread);
  EXPECT_EQ(db.query_int64("SELECT count FROM call_stats WHERE size_bin = 12 AND phase = 1"), 1);
  EXPECT_EQ(db.query_int64("SELECT finalized FROM ranks WHERE rank = 0"), 1);
  EXPECT_EQ(db.query_int64("SELECT dropped_events FROM ranks"), 0);
  EXPECT_EQ(
      db.query_int64("SELECT count(*) FROM communicators WHERE name = 'MPI_COMM_WORLD' AND members = '0,1'"),
      1);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM phases"), 2);
}

// Threads recording far faster than the writer stores, into rings of 64 records: a full ring makes
// the thread wait for the writer instead of dropping, so every record arrives.
TEST(ProfilerStore, FullBuffersMakeThreadsWaitAndLoseNothing) {
  const fs::path directory = fresh_directory("store-backpressure");
  // A flush interval of 1 s: only a full or half-full ring wakes the writer in time.
  Profiler* profiler = start_small_rings(directory, 64, 1000);
  ASSERT_NE(profiler, nullptr);
  constexpr int kThreads = 3;
  constexpr int kCallsPerThread = 200000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        record_send(*profiler, kNoCommunicator, 1, 8, 0);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  const std::string path = profiler->stop();
  {
    SqliteDatabase rank_file(path, SQLITE_OPEN_READONLY);
    EXPECT_EQ(rank_file.query_int64("SELECT dropped_events FROM ranks"), 0);
    EXPECT_EQ(rank_file.query_int64("SELECT sum(count) FROM trace_chunks"), kThreads * kCallsPerThread);
    // 600,000 records through 64-record rings: the threads waited, and the file says so.
    EXPECT_GT(rank_file.query_int64("SELECT count FROM profiler_overhead WHERE component = 'trace_wait'"), 0);
  }
  SqliteDatabase db(merged(directory), SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls"), kThreads * kCallsPerThread);
  EXPECT_EQ(db.query_int64("SELECT count(DISTINCT id) FROM mpi_calls"), kThreads * kCallsPerThread);
  // The writer counts the calls into the summary as it drains the rings, while they refill.
  EXPECT_EQ(db.query_int64("SELECT sum(count) FROM call_stats"), kThreads * kCallsPerThread);
  EXPECT_EQ(db.query_int64("SELECT sum(calls) FROM thread_stats"), kThreads * kCallsPerThread);
}

// A rank file that cannot be written any more (here deleted while the program runs, as a disk
// that fills up or a cleaned-up folder would leave it) costs the profile, never the program: the
// writer says so once, and threads whose buffers fill drop records instead of waiting for ever.
TEST(ProfilerStore, ARankFileThatCannotBeWrittenLeavesTheProgramRunning) {
  Profiler* profiler = start_small_rings(fresh_directory("store-write-failure"), 64, 10);
  ASSERT_NE(profiler, nullptr);
  record_send(*profiler, kNoCommunicator, 1, 8, 0);
  profiler->flush();
  ASSERT_TRUE(fs::remove(profiler->rank_database_path()));
  testing::internal::CaptureStderr();
  for (int i = 0; i < 100000; ++i) { // far more than the buffer holds
    record_send(*profiler, kNoCommunicator, 1, 8, 0);
  }
  profiler->flush();
  profiler->stop();
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("commlens: writing the profile failed"), std::string::npos) << said;
  EXPECT_EQ(said.find("commlens: writing the profile failed"),
            said.rfind("commlens: writing the profile failed"))
      << "said once: " << said;
}

TEST(ProfilerStore, SummaryModeKeepsAggregatesOnly) {
  const fs::path directory = fresh_directory("store-summary");
  Profiler* profiler = start_profiler(directory, Mode::Summary, 0);
  ASSERT_NE(profiler, nullptr);
  for (int i = 0; i < 1000; ++i) {
    record_send(*profiler, kNoCommunicator, i % 2, 8, 0);
  }
  SqliteDatabase db(profiler->stop(), SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM mpi_calls"), 0);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM call_stats"), 2);
  EXPECT_EQ(db.query_int64("SELECT sum(count) FROM call_stats WHERE peer = 1 AND comm_id = -1"), 500);
  EXPECT_EQ(db.query_int64("SELECT sum(bytes_sent) FROM call_stats"), 8000);
}

TEST(ProfilerStore, PeriodicFlushMakesEventsVisibleBeforeStop) {
  const fs::path directory = fresh_directory("store-flush");
  Profiler* profiler = start_profiler(directory, Mode::Trace, 0);
  ASSERT_NE(profiler, nullptr);
  for (int i = 0; i < 100; ++i) {
    record_send(*profiler, kNoCommunicator, 1, 8, 0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200)); // ten flush intervals
  {
    SqliteDatabase db(profiler->rank_database_path(), SQLITE_OPEN_READONLY);
    EXPECT_EQ(db.query_int64("SELECT sum(count) FROM trace_chunks"), 100);
    // Summaries are rewritten at most once per flush interval, so they lag the chunks by one at most.
    EXPECT_EQ(db.query_int64("SELECT sum(count) FROM call_stats"), 100);
    EXPECT_EQ(db.query_int64("SELECT finalized FROM ranks"), 0);
  }
  profiler->stop();
}

// The writer rewrites summaries at most once per flush interval on its own, but a flush asked for
// (MPI_Abort, a checkpoint) stores everything recorded so far, however soon after the last one.
TEST(ProfilerStore, RequestedFlushStoresTheSummariesEvenWithinTheFlushInterval) {
  const fs::path directory = fresh_directory("store-requested-flush");
  Config config;
  config.output_directory = directory.string();
  config.mode = Mode::Trace;
  config.flush_interval_ms = 1000;
  Profiler* profiler = Profiler::start(config, ProcessIdentity{0, 1, "testhost", 1000}, kFunctions);
  ASSERT_NE(profiler, nullptr);
  for (int round = 1; round <= 3; ++round) {
    for (int i = 0; i < 10; ++i) {
      record_send(*profiler, kNoCommunicator, 1, 8, 0);
    }
    profiler->flush();
    SqliteDatabase db(profiler->rank_database_path(), SQLITE_OPEN_READONLY);
    EXPECT_EQ(db.query_int64("SELECT sum(count) FROM trace_chunks"), 10 * round);
    EXPECT_EQ(db.query_int64("SELECT sum(count) FROM call_stats"), 10 * round);
  }
  profiler->stop();
}

TEST(ProfilerStore, UnwritableOutputDirectoryLeavesTheProfilerOff) {
  const fs::path blocker = fresh_directory("store-blocker");
  { std::ofstream(blocker.string()) << "a file, not a directory"; }
  testing::internal::CaptureStderr();
  Profiler* profiler = start_profiler(blocker / "out", Mode::Summary, 0);
  const std::string error = testing::internal::GetCapturedStderr();
  EXPECT_EQ(profiler, nullptr);
  EXPECT_NE(error.find("commlens: cannot create COMMLENS_OUTPUT directory"), std::string::npos);
  EXPECT_NE(error.find("running unprofiled"), std::string::npos);
  fs::remove(blocker);
}

// A rank that cannot keep a file still records (its collectives must match the other ranks'), into
// memory: nothing appears in the output folder, not even under a path that could be written.
TEST(ProfilerStore, DiscardedStorageRecordsButWritesNothing) {
  const fs::path directory = fresh_directory("store-discarded");
  Config config;
  config.output_directory = (directory / "out").string();
  config.mode = Mode::Trace;
  Profiler* profiler = Profiler::start(config, ProcessIdentity{0, 2, "testhost", 1000}, kFunctions, {},
                                       Profiler::Storage::Discarded);
  ASSERT_NE(profiler, nullptr);
  EXPECT_FALSE(profiler->keeps_rank_file());
  CommunicatorInfo world;
  world.id = 0;
  world.name = "MPI_COMM_WORLD";
  world.members = {0, 1};
  record_send(*profiler, profiler->communicators().add(world), 1, 64, 5);
  profiler->add_overhead("init", 1, 2'000, 1'000);
  profiler->flush();
  profiler->stop();
  EXPECT_FALSE(fs::exists(directory / "out")) << "nothing is written, not even the folder";
  EXPECT_FALSE(fs::exists(":memory:")) << "the in-memory database is no file in the working directory";
}

TEST(ProfilerStore, StoresTheCpuTimeOfAnOverheadRowBesideItsWallTime) {
  const fs::path directory = fresh_directory("store-cpu-time");
  Profiler* profiler = start_profiler(directory, Mode::Summary, 0);
  ASSERT_NE(profiler, nullptr);
  profiler->add_overhead("init", 1, 5'000, 3'000);
  profiler->add_overhead("finalize", 1, 7'000);
  const std::string path = profiler->stop();
  SqliteDatabase rank_file(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(rank_file.query_int64("SELECT cpu_time_ns FROM profiler_overhead WHERE component = 'init'"),
            3'000);
  EXPECT_EQ(rank_file.query_int64("SELECT time_ns FROM profiler_overhead WHERE component = 'init'"), 5'000);
  EXPECT_EQ(rank_file.query_int64("SELECT count(*) FROM profiler_overhead WHERE component = 'finalize' "
                                  "AND cpu_time_ns IS NULL"),
            1);
}

} // namespace

namespace {

TEST(ProfilerStore, StoresACollectorsRowsAndTheMergeCopiesThem) {
  const fs::path directory = fresh_directory("store-rows");
  Profiler* profiler = start_profiler(directory, Mode::Summary, 0);
  ASSERT_NE(profiler, nullptr);
  profiler->set_run_value("world_size", "1");
  profiler->store_rows("INSERT INTO strings VALUES (?, ?)",
                       {{SqlValue{std::int64_t{7}}, SqlValue{std::string("seven")}},
                        {SqlValue{std::int64_t{8}}, SqlValue{std::string("eight")}}});
  SqliteDatabase db(profiler->stop(), SQLITE_OPEN_READONLY);
  EXPECT_EQ(
      db.query_int64("SELECT count(*) FROM strings WHERE (id, value) IN (VALUES (7, 'seven'), (8, 'eight'))"),
      2);
  const MergeResult merged = merge_rank_databases(MergeOptions{directory.string(), "", nullptr});
  SqliteDatabase merged_db(merged.output_path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(merged_db.query_int64("SELECT count(*) FROM strings"), 2);
}

} // namespace

namespace {

// A meter of this test's own (own_time.hpp): meters are found by every profiler's stop().
OwnTimeMeter wrapped_calls_meter("test_wrapped_calls");

// Spins for `span`: the wrapper's own work, which a sleep would not be (it must show as time).
void spin_for(std::chrono::microseconds span) {
  const auto until = std::chrono::steady_clock::now() + span;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// 160 wrapped calls on a fresh thread (its count of calls starts at 0): one in 16 is timed, each
// with 50 us of the wrapper's work around a wrapped function that takes 20 ms on the timed calls.
// The estimate keeps the wrapper's time and leaves the wrapped function's out.
TEST(ProfilerStore, StoresTheOwnTimeOfWrappedCallsFromASampleWithoutTheWrappedFunctions) {
  constexpr int kCalls = 160;
  constexpr auto kOwnWork = std::chrono::microseconds(50);
  const fs::path directory = fresh_directory("store-own-time");
  Profiler* profiler = start_profiler(directory, Mode::Summary, 0);
  ASSERT_NE(profiler, nullptr);
  std::thread([&] {
    for (int call = 0; call < kCalls; ++call) {
      OwnTimeSample sample(wrapped_calls_meter);
      spin_for(kOwnWork / 2);
      const int result = sample.forward([call] {
        if (call % kOwnTimeSampleEvery == kOwnTimeSampleEvery - 1) // the timed ones
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return call;
      });
      EXPECT_EQ(result, call) << "the wrapped function's result is returned";
      spin_for(kOwnWork / 2);
    }
  }).join();
  EXPECT_EQ(wrapped_calls_meter.samples(), kCalls / kOwnTimeSampleEvery);
  const std::string path = profiler->stop();
  SqliteDatabase rank_file(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(
      rank_file.query_int64("SELECT count FROM profiler_overhead WHERE component = 'test_wrapped_calls'"),
      kCalls);
  const std::int64_t own_ns =
      rank_file.query_int64("SELECT time_ns FROM profiler_overhead WHERE component = 'test_wrapped_calls'");
  EXPECT_GE(own_ns, kCalls * std::chrono::nanoseconds(kOwnWork).count()) << "the wrapper's work counts";
  EXPECT_LT(own_ns, kCalls * 10'000'000) << "the wrapped function's 20 ms are left out of each sample";
}

} // namespace
