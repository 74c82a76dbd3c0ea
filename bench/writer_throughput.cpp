// How many trace events per second one rank's writer stores in SQLite without the recording
// thread ever waiting, and how many bytes each event costs in the database.
//
// Phase 1 (sustained): one application thread records at a paced target rate for a few seconds;
// the run passes when nothing was dropped. Phase 2 (burst): the thread records as fast as it can;
// the writer's own rate is events stored per second of its busy time.
//   writer_throughput [target_events_per_second=2000000] [seconds=4]
#include "commlens/profiler/profiler.hpp"
#include "commlens/profiler/sqlite.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <string>

namespace {

using namespace commlens;
namespace fs = std::filesystem;

const std::vector<FunctionDescription> kFunctions = {{"MPI_Unused", "none"},
                                                     {"MPI_Isend", "p2p", TagOrRoot::Tag}};

struct Outcome {
  std::uint64_t recorded = 0;
  std::uint64_t stored = 0;
  std::uint64_t dropped = 0;
  double seconds = 0;
  double writer_busy_seconds = 0;
  double stop_seconds = 0; // finalize: turning the chunk backlog into rows
  std::uint64_t file_bytes = 0;
};

Outcome run(const std::string& name, double target_rate, double seconds) {
  const fs::path directory = fs::temp_directory_path() / ("commlens-bench-" + name);
  fs::remove_all(directory);
  Config config;
  config.output_directory = directory.string();
  config.mode = Mode::Trace;
  Profiler* profiler = Profiler::start(config, ProcessIdentity{0, 1, "bench", 1}, kFunctions);
  if (profiler == nullptr) {
    std::exit(2);
  }
  ThreadRecorder* recorder = profiler->thread_recorder();
  const std::uint64_t begin = monotonic_ns();
  const auto duration_ns = static_cast<std::uint64_t>(seconds * 1e9);
  Outcome outcome;
  for (std::uint64_t now = begin; now - begin < duration_ns; now = monotonic_ns()) {
    // Pacing: record the events due by now, in batches so the clock read stays negligible.
    const auto due = target_rate > 0 ? static_cast<std::uint64_t>((now - begin) * target_rate / 1e9)
                                     : outcome.recorded + 256;
    for (; outcome.recorded < due; ++outcome.recorded) {
      EventRecord record{};
      record.start_ticks = now_ticks();
      record.call_id = recorder->next_call_id();
      record.bytes_sent = 1024 + (outcome.recorded & 1023);
      record.peer = static_cast<std::int32_t>(outcome.recorded & 7);
      record.tag_or_root = 7;
      record.function = 1;
      record.communicator_index = kNoCommunicator;
      record.request_id = record.call_id;
      record.end_ticks = now_ticks();
      if (recorder->record_call(record, 0)) {
        profiler->wake_writer();
      }
    }
  }
  outcome.seconds = static_cast<double>(monotonic_ns() - begin) / 1e9;
  const std::uint64_t stop_begin = monotonic_ns();
  const std::string path = profiler->stop();
  outcome.stop_seconds = static_cast<double>(monotonic_ns() - stop_begin) / 1e9;
  SqliteDatabase db(path, SQLITE_OPEN_READONLY);
  outcome.stored = static_cast<std::uint64_t>(db.query_int64("SELECT count(*) FROM mpi_calls"));
  outcome.dropped = static_cast<std::uint64_t>(db.query_int64("SELECT dropped_events FROM ranks"));
  outcome.writer_busy_seconds = static_cast<double>(db.query_int64(
                                    "SELECT time_ns FROM profiler_overhead WHERE component = 'writer'")) /
                                1e9;
  db.close();
  outcome.file_bytes = fs::file_size(path);
  fs::remove_all(directory);
  return outcome;
}

} // namespace

int main(int argc, char** argv) {
  const double target = argc > 1 ? std::stod(argv[1]) : 2e6;
  const double seconds = argc > 2 ? std::stod(argv[2]) : 4.0;

  const Outcome paced = run("paced", target, seconds);
  fmt::print("sustained: target {:.2f} M events/s for {:.1f} s: recorded {}, stored {}, dropped {} -> {}\n",
             target / 1e6, paced.seconds, paced.recorded, paced.stored, paced.dropped,
             paced.dropped == 0 ? "PASS" : "FAIL");
  fmt::print(
      "sustained: database {:.1f} bytes/event; writer busy {:.0f}% of the run; finalize turned the backlog "
      "into rows in {:.2f} s\n",
      static_cast<double>(paced.file_bytes) / static_cast<double>(paced.stored),
      100.0 * paced.writer_busy_seconds / paced.seconds, paced.stop_seconds);

  const Outcome burst = run("burst", 0, seconds / 2);
  const double ingest = static_cast<double>(burst.recorded - burst.dropped) / burst.seconds;
  const double rows = static_cast<double>(burst.stored) / (burst.writer_busy_seconds + burst.stop_seconds);
  fmt::print(
      "burst: application recorded {:.2f} M events/s; writer ingested {:.2f} M events/s without blocking it "
      "(dropped {:.1f}%); rows materialized at {:.2f} M/s\n",
      static_cast<double>(burst.recorded) / burst.seconds / 1e6, ingest / 1e6,
      100.0 * static_cast<double>(burst.dropped) / static_cast<double>(burst.recorded), rows / 1e6);
  fmt::print("ratio: ingest rate / 2 M events/s target = {:.2f}x\n", ingest / 2e6);
  return paced.dropped == 0 ? 0 : 1;
}
