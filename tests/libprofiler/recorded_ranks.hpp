#pragma once
// Rank files of trace-mode runs recorded in the test process (no MPI): threads that post
// requests and complete them out of posting order, for the tests of what the merge makes of them.
#include "commlens/profiler/profiler.hpp"
#include "commlens/profiler/sqlite.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace commlens {

inline const std::vector<FunctionDescription> kFunctions = {{"MPI_Unused", "none"},
                                                            {"MPI_Isend", "p2p", TagOrRoot::Tag},
                                                            {"MPI_Irecv", "p2p", TagOrRoot::Tag},
                                                            {"MPI_Waitall", "completion"}};

// A call with no peer, tag, root or communicator (MPI_Waitall, function 3), timed now.
inline EventRecord plain_call(std::uint64_t call_id) {
  EventRecord call{};
  call.start_ticks = now_ticks();
  call.call_id = call_id;
  call.function = 3;
  call.peer = kNoPeer;
  call.tag_or_root = kNoTagOrRoot;
  call.communicator_index = kNoCommunicator;
  call.end_ticks = now_ticks();
  return call;
}

// One thread's calls: per step an Isend and an Irecv (two requests), then a Waitall that completes
// both, the receive's first when `step` is odd (completions out of posting order).
inline void record_steps(Profiler& profiler, int steps) {
  ThreadRecorder* recorder = profiler.thread_recorder();
  for (int step = 0; step < steps; ++step) {
    EventRecord posted[2];
    for (int side = 0; side < 2; ++side) {
      EventRecord& record = posted[side];
      record = EventRecord{};
      record.start_ticks = now_ticks();
      record.call_id = recorder->next_call_id();
      record.function = static_cast<FunctionId>(1 + side);
      (side == 0 ? record.bytes_sent : record.bytes_recv) = 64 + static_cast<std::uint64_t>(step % 500);
      record.peer = step % 3;
      record.tag_or_root = step % 7;
      record.communicator_index = kNoCommunicator;
      record.request_id = record.call_id;
      record.end_ticks = now_ticks();
      recorder->record_call(record, 0);
    }
    EventRecord wait = plain_call(recorder->next_call_id());
    for (int index = 0; index < 2; ++index) {
      EventRecord completion = posted[(index + step) % 2];
      completion.kind = RecordKind::RequestCompletion;
      completion.end_ticks = wait.end_ticks;
      completion.call_id = wait.call_id;
      recorder->record_request_completion(completion);
    }
    recorder->record_call(wait, 0);
  }
}

// `outer` calls, each making `inner` calls from inside it (as MPI runs a program's callbacks: a
// generalized request's query function inside MPI_Wait): an outer call's id is taken when it
// starts and it is recorded when it ends, after the calls it made.
inline void record_nested_calls(Profiler& profiler, int outer, int inner) {
  ThreadRecorder* recorder = profiler.thread_recorder();
  for (int step = 0; step < outer; ++step) {
    const EventRecord call = plain_call(recorder->next_call_id());
    for (int made = 0; made < inner; ++made) {
      recorder->record_call(plain_call(recorder->next_call_id()), 0);
    }
    recorder->record_call(call, 0);
  }
}

// Rank `rank` of `size` of a run (trace mode unless said), recording what `body` records.
inline void record_rank_with(const std::filesystem::path& directory, int rank, int size,
                             const std::function<void(Profiler&)>& body, Mode mode = Mode::Trace) {
  Config config;
  config.output_directory = directory.string();
  config.mode = mode;
  Profiler* profiler = Profiler::start(config, ProcessIdentity{rank, size, "host", 100 + rank}, kFunctions);
  ASSERT_NE(profiler, nullptr);
  profiler->set_run_value("world_size", std::to_string(size));
  body(*profiler);
  profiler->stop();
}

// Rank `rank` of `size`, its main thread and one more making `steps` steps each; with
// `bad_last_call`, the second thread's last call has a buffer location that mpi_call_rows.code
// cannot hold, so the merge fails on that rank after its other rows.
inline void record_rank(const std::filesystem::path& directory, int rank, int size, int steps,
                        bool bad_last_call = false, Mode mode = Mode::Trace) {
  record_rank_with(
      directory, rank, size,
      [&](Profiler& profiler) {
        record_steps(profiler, steps);
        std::thread second([&] {
          record_steps(profiler, steps / 2);
          if (bad_last_call) {
            EventRecord call{};
            call.start_ticks = call.end_ticks = now_ticks();
            call.call_id = profiler.thread_recorder()->next_call_id();
            call.function = 3;
            call.location = static_cast<BufferLocation>(5);
            profiler.thread_recorder()->record_call(call, 0);
          }
        });
        second.join();
      },
      mode);
}

// An MPI_Isend whose request completes at once, `requests` times, after a first one that
// completes only after all of them, and the second one completing a second time last: requests
// completed long after later ones (more than the merge holds back to sort them) and twice.
inline void record_late_completions(Profiler& profiler, int requests) {
  ThreadRecorder* recorder = profiler.thread_recorder();
  const auto post = [&] {
    EventRecord call{};
    call.start_ticks = now_ticks();
    call.call_id = recorder->next_call_id();
    call.function = 1;
    call.peer = 1;
    call.tag_or_root = 0;
    call.communicator_index = kNoCommunicator;
    call.request_id = call.call_id;
    call.end_ticks = now_ticks();
    recorder->record_call(call, 0);
    return call;
  };
  const auto complete = [&](EventRecord posted, std::uint64_t bytes) {
    posted.kind = RecordKind::RequestCompletion;
    posted.end_ticks = now_ticks();
    posted.bytes_sent = bytes;
    recorder->record_request_completion(posted);
  };
  const EventRecord first = post();
  EventRecord second{};
  for (int index = 0; index < requests; ++index) {
    const EventRecord posted = post();
    complete(posted, 10);
    if (index == 0) {
      second = posted;
    }
  }
  complete(first, 20);
  complete(second, 30); // its second completion
}

inline std::filesystem::path fresh_directory(const std::string& name) {
  const std::filesystem::path directory = std::filesystem::path(testing::TempDir()) / name;
  std::filesystem::remove_all(directory);
  return directory;
}

inline std::int64_t rows_differing(SqliteDatabase& db, const std::string& a, const std::string& b) {
  return db.query_int64(
      fmt::format("SELECT (SELECT count(*) FROM (SELECT * FROM {0} EXCEPT SELECT * FROM {1})) + "
                  "(SELECT count(*) FROM (SELECT * FROM {1} EXCEPT SELECT * FROM {0}))",
                  a, b));
}

} // namespace commlens
