// How fast one rank's trace reaches its file and the merged database, and what it costs on disk.
//
// One application thread records trace events at a paced target rate (default 10 M events/s) for
// a few seconds while the writer stores them. A full buffer makes the thread wait for the writer
// (back-pressure), so nothing is dropped: the figures are the rate the thread achieved, how often
// and how long it waited, the bytes per event of the rank file, then the merge of that file
// (seconds, events/s, MB/s written, bytes per event of the merged file) against writing the same
// number of bytes to the same disk directly (the merge "keeps up with the disk" at ratio >= 1).
// The merge runs twice on the same rank file: decoding its chunks, and copying the pages the rank
// encodes as at MPI_Finalize (trace_pages.hpp), whose encoding time is printed per call.
// Mix "isend" records MPI_Isend calls only; "requests" makes every second call an MPI_Wait that
// completes the Isend before it, so a third of the records are request completions (mpi_requests).
//   writer_throughput [target_events_per_second=10000000] [seconds=4] [mix=isend|requests]
#include "commlens/profiler/event_codec.hpp"
#include "commlens/profiler/merge.hpp"
#include "commlens/profiler/profiler.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "commlens/profiler/trace_pages.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace commlens;
namespace fs = std::filesystem;

const std::vector<FunctionDescription> kFunctions = {
    {"MPI_Unused", "none"}, {"MPI_Isend", "p2p", TagOrRoot::Tag}, {"MPI_Wait", "completion"}};
constexpr FunctionId kIsend = 1;
constexpr FunctionId kWait = 2;

enum class Mix { Isend, Requests };

struct Outcome {
  std::uint64_t recorded = 0;    // calls
  std::uint64_t completions = 0; // request completions (mix "requests")
  double seconds = 0;
  double stop_seconds = 0;
  std::uint64_t dropped = 0;
  std::uint64_t waits = 0;
  double wait_seconds = 0;
  double writer_busy_seconds = 0;
  std::uint64_t rank_file_bytes = 0;
  struct Merge {
    std::uint64_t calls = 0;
    double seconds = 0;
    double cpu_seconds = 0; // the process's CPU time during the merge (the writer has stopped)
    double plan_seconds = 0;
    double rows_seconds = 0;
    std::uint64_t file_bytes = 0;
    bool copied_pages = false;
  };
  Merge decoded, copied; // decoding the chunks; copying the pages the rank encoded
  double encode_seconds = 0;
  std::uint64_t encoded_calls = 0;
  std::uint64_t merged_calls = 0;
  double decode_seconds = 0;
  std::uint64_t merged_file_bytes = 0;
  std::uint64_t call_table_bytes = 0; // the calls' table and its indexes (dbstat)
  std::uint64_t call_index_bytes = 0;
  std::uint64_t merged_requests = 0;
  std::uint64_t request_table_bytes = 0; // the requests' table and its indexes (dbstat)
};

// Bytes of the tables named in `tables` (an SQL list), and of every index on them.
std::uint64_t table_bytes(SqliteDatabase& db, const char* tables) {
  return static_cast<std::uint64_t>(
      db.query_int64(fmt::format("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN {}", tables)));
}
std::uint64_t index_bytes(SqliteDatabase& db, const char* tables) {
  return static_cast<std::uint64_t>(db.query_int64(
      fmt::format("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master "
                  "WHERE type = 'index' AND tbl_name IN {})",
                  tables)));
}

std::int64_t overhead(SqliteDatabase& db, const char* component, const char* column) {
  return db.query_int64(fmt::format(
      "SELECT coalesce((SELECT {} FROM profiler_overhead WHERE component = '{}'), 0)", column, component));
}

// On a loaded machine the merge's wall time includes waiting for a core; its CPU time does not.
double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

Outcome::Merge timed_merge(const fs::path& directory, const std::string& name, bool use_rank_pages) {
  MergeOptions options{directory.string(), (directory / name).string(), nullptr};
  options.use_rank_pages = use_rank_pages;
  const std::uint64_t begin = monotonic_ns();
  const double cpu_begin = process_cpu_seconds();
  const MergeResult merged = merge_rank_databases(options);
  return Outcome::Merge{merged.calls,
                        static_cast<double>(monotonic_ns() - begin) / 1e9,
                        process_cpu_seconds() - cpu_begin,
                        merged.plan_seconds,
                        merged.rows_seconds,
                        fs::file_size(merged.output_path),
                        !merged.trace_pages_ranks.empty()};
}

// Seconds to read and decode every chunk of a rank file without storing anything: the merge's
// share of its row-making time that is not SQLite's.
double decode_seconds(const std::string& rank_file) {
  SqliteDatabase db(rank_file, SQLITE_OPEN_READONLY);
  const std::uint64_t begin = monotonic_ns();
  auto chunks = db.prepare("SELECT records FROM trace_chunks ORDER BY id");
  std::uint64_t checksum = 0;
  while (chunks.step()) {
    const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(chunks.get(), 0));
    ChunkDecoder decoder({data, static_cast<std::size_t>(sqlite3_column_bytes(chunks.get(), 0))});
    EventRecord record{};
    while (decoder.next(record))
      checksum += record.start_ticks;
  }
  const double seconds = static_cast<double>(monotonic_ns() - begin) / 1e9;
  return checksum == 1 ? -seconds : seconds; // the checksum keeps the decoding from being optimised away
}

Outcome run(const fs::path& directory, double target_rate, double seconds, Mix mix) {
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
  EventRecord last_isend{};
  for (std::uint64_t now = begin; now - begin < duration_ns; now = monotonic_ns()) {
    // Pacing: record the events due by now, in batches so the clock read stays negligible.
    // At most 4096 events between clock reads: a thread held back by a full buffer falls behind
    // the schedule, and must not then run past the end of the run catching up.
    const auto due =
        std::min(static_cast<std::uint64_t>((now - begin) * target_rate / 1e9), outcome.recorded + 4096);
    for (; outcome.recorded < due; ++outcome.recorded) {
      EventRecord record{};
      record.start_ticks = now_ticks();
      record.call_id = recorder->next_call_id();
      record.bytes_sent = 1024 + (outcome.recorded & 1023);
      record.peer = static_cast<std::int32_t>(outcome.recorded & 7);
      record.tag_or_root = 7;
      record.function = kIsend;
      record.communicator_index = kNoCommunicator;
      record.request_id = record.call_id;
      const bool wait = mix == Mix::Requests && (outcome.recorded & 1) == 1;
      if (wait) { // completes the Isend before it
        record.function = kWait;
        record.bytes_sent = 0;
        record.peer = kNoPeer;
        record.tag_or_root = kNoTagOrRoot;
        record.request_id = last_isend.call_id;
      }
      record.end_ticks = now_ticks();
      bool wake = false;
      if (wait) {
        EventRecord completion = last_isend;
        completion.kind = RecordKind::RequestCompletion;
        completion.end_ticks = record.end_ticks;
        completion.call_id = record.call_id;
        completion.request_id = last_isend.call_id;
        wake = recorder->record_request_completion(completion);
        ++outcome.completions;
      }
      last_isend = record;
      if (recorder->record_call(record, 0) || wake) {
        profiler->wake_writer();
      }
    }
  }
  outcome.seconds = static_cast<double>(monotonic_ns() - begin) / 1e9;
  const std::uint64_t stop_begin = monotonic_ns();
  const std::string path = profiler->stop();
  outcome.stop_seconds = static_cast<double>(monotonic_ns() - stop_begin) / 1e9;
  {
    SqliteDatabase db(path, SQLITE_OPEN_READONLY);
    outcome.dropped = static_cast<std::uint64_t>(db.query_int64("SELECT dropped_events FROM ranks"));
    outcome.waits = static_cast<std::uint64_t>(overhead(db, "trace_wait", "count"));
    outcome.wait_seconds = static_cast<double>(overhead(db, "trace_wait", "time_ns")) / 1e9;
    outcome.writer_busy_seconds = static_cast<double>(overhead(db, "writer", "time_ns")) / 1e9;
  }
  outcome.rank_file_bytes = fs::file_size(path);

  outcome.decoded = timed_merge(directory, "decoded.sqlite", false);
  const std::uint64_t encode_begin = monotonic_ns();
  const std::vector<RankTracePages::Report> encoded = encode_trace_pages_in(directory.string());
  outcome.encode_seconds = static_cast<double>(monotonic_ns() - encode_begin) / 1e9;
  outcome.encoded_calls = encoded.front().calls;
  outcome.copied = timed_merge(directory, "commlens.sqlite", true);
  outcome.merged_calls = outcome.copied.calls;
  outcome.merged_file_bytes = outcome.copied.file_bytes;
  SqliteDatabase db((directory / "commlens.sqlite").string(), SQLITE_OPEN_READONLY);
  // mpi_call_rows, or the mpi_calls table of files merged before it existed; the same for requests.
  constexpr const char* kCallTables = "('mpi_call_rows', 'mpi_calls')";
  constexpr const char* kRequestTables = "('mpi_request_rows', 'mpi_requests')";
  outcome.call_table_bytes = table_bytes(db, kCallTables);
  outcome.call_index_bytes = index_bytes(db, kCallTables);
  outcome.request_table_bytes = table_bytes(db, kRequestTables) + index_bytes(db, kRequestTables);
  outcome.merged_requests = static_cast<std::uint64_t>(db.query_int64("SELECT count(*) FROM mpi_requests"));
  outcome.decode_seconds = decode_seconds(path);
  return outcome;
}

// Seconds to write `bytes` to a new file in `directory` in 1 MiB blocks (page cache, as the merge
// writes with synchronous=OFF): what the disk path takes for the merged file's bytes alone.
double raw_write_seconds(const fs::path& directory, std::uint64_t bytes) {
  const fs::path file = directory / "raw-write";
  std::vector<char> block(1 << 20, 'x');
  const std::uint64_t begin = monotonic_ns();
  FILE* out = std::fopen(file.c_str(), "wb");
  for (std::uint64_t written = 0; written < bytes; written += block.size()) {
    std::fwrite(block.data(), 1, block.size(), out);
  }
  std::fclose(out);
  const double seconds = static_cast<double>(monotonic_ns() - begin) / 1e9;
  fs::remove(file);
  return seconds;
}

} // namespace

int main(int argc, char** argv) {
  const double target = argc > 1 ? std::stod(argv[1]) : 10e6;
  const double seconds = argc > 2 ? std::stod(argv[2]) : 4.0;
  const std::string mix_name = argc > 3 ? argv[3] : "isend";
  if (mix_name != "isend" && mix_name != "requests") {
    fmt::print(stderr, "usage: writer_throughput [events_per_second] [seconds] [isend|requests]\n");
    return 2;
  }
  const Mix mix = mix_name == "requests" ? Mix::Requests : Mix::Isend;
  const fs::path directory = fs::temp_directory_path() / fmt::format("commlens-bench-writer-{}", getpid());

  const Outcome o = run(directory, target, seconds, mix);
  const bool complete = o.dropped == 0 && o.merged_calls == o.recorded &&
                        o.merged_requests == o.completions && o.decoded.calls == o.recorded &&
                        o.copied.copied_pages;
  const double achieved = static_cast<double>(o.recorded) / o.seconds;
  fmt::print(
      "record: target {:.2f} M calls/s for {:.1f} s: recorded {} ({:.2f} M/s, {:.2f}x the target) and {} "
      "request completions, dropped {} -> {}\n",
      target / 1e6, o.seconds, o.recorded, achieved / 1e6, achieved / target, o.completions, o.dropped,
      complete ? "PASS" : "FAIL");
  fmt::print(
      "record: waited for the writer {} times, {:.3f} s in all ({:.1f}% of the run); writer busy {:.0f}% "
      "of the run; stop {:.2f} s\n",
      o.waits, o.wait_seconds, 100.0 * o.wait_seconds / o.seconds, 100.0 * o.writer_busy_seconds / o.seconds,
      o.stop_seconds);
  // An event is a trace record: a call or a request completion.
  const auto events = static_cast<double>(o.merged_calls + o.merged_requests);
  const auto per = [](std::uint64_t bytes, std::uint64_t count) {
    return count == 0 ? 0.0 : static_cast<double>(bytes) / static_cast<double>(count);
  };
  fmt::print("disk: rank file {:.1f} bytes/event, merged file {:.1f} bytes/event ({} calls, {} requests): "
             "calls' table {:.1f} bytes/call, its indexes {:.1f}; requests' table and indexes {:.1f} "
             "bytes/request\n",
             per(o.rank_file_bytes, o.recorded + o.completions),
             static_cast<double>(o.merged_file_bytes) / events, o.merged_calls, o.merged_requests,
             per(o.call_table_bytes, o.merged_calls), per(o.call_index_bytes, o.merged_calls),
             per(o.request_table_bytes, o.merged_requests));
  const double raw = raw_write_seconds(directory, o.merged_file_bytes);
  fmt::print("raw write of the merged file's {:.0f} MB: {:.2f} s ({:.0f} MB/s)\n",
             static_cast<double>(o.merged_file_bytes) / 1e6, raw,
             static_cast<double>(o.merged_file_bytes) / raw / 1e6);
  const auto print_merge = [&](const char* how, const Outcome::Merge& merge) {
    fmt::print(
        "merge, {}: {:.2f} s ({:.2f} s CPU; plan {:.2f} s, rows and tiles {:.2f} s), {:.2f} M events/s, "
        "{:.0f} MB/s written; merge / raw speed = {:.3f}x\n",
        how, merge.seconds, merge.cpu_seconds, merge.plan_seconds, merge.rows_seconds,
        events / merge.seconds / 1e6, static_cast<double>(merge.file_bytes) / merge.seconds / 1e6,
        raw / merge.seconds);
  };
  print_merge("decoding the chunks", o.decoded);
  fmt::print("rank-side encoding (as at MPI_Finalize): {:.2f} s, {:.0f} ns a call ({} calls)\n",
             o.encode_seconds, o.encode_seconds * 1e9 / static_cast<double>(o.encoded_calls),
             o.encoded_calls);
  print_merge("copying the rank's pages", o.copied);
  fmt::print("copying vs decoding: merge {:.2f}x as fast; encoding and merge together {:.2f}x (one rank: "
             "nothing runs in parallel); reading and decoding the chunks alone: {:.2f} s\n",
             o.decoded.seconds / o.copied.seconds, o.decoded.seconds / (o.encode_seconds + o.copied.seconds),
             o.decode_seconds);
  fs::remove_all(directory);
  return complete ? 0 : 1;
}
