// Writes the rank files a job of RANKS ranks would leave, without running it: each rank is
// started and stopped in turn through the profiler's own API (the rank file, its summaries, and in
// trace mode its chunks), recording CALLS calls of a halo exchange (an MPI_Isend and an MPI_Irecv
// to each neighbour, an MPI_Waitall completing them, every eighth step an MPI_Allreduce); in trace
// mode each then encodes its pages, as at MPI_Finalize. What bench/merge_scale.sh merges at 4,096
// and 16,384 ranks, which no job on one machine could run. A process keeps what a profiler it
// started allocated (its threads' buffers), so the ranks are recorded by child processes,
// kBatch ranks each.
//   rank_files DIR RANKS CALLS summary|trace
#include "commlens/profiler/profiler.hpp"
#include "commlens/profiler/trace_pages.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace commlens;

const std::vector<FunctionDescription> kFunctions = {{"MPI_Init", "lifecycle"},
                                                     {"MPI_Isend", "p2p", TagOrRoot::Tag},
                                                     {"MPI_Irecv", "p2p", TagOrRoot::Tag},
                                                     {"MPI_Waitall", "completion"},
                                                     {"MPI_Allreduce", "collective"}};
enum Function : FunctionId { kIsend = 1, kIrecv = 2, kWaitall = 3, kAllreduce = 4 };

EventRecord call_now(ThreadRecorder& recorder, FunctionId function) {
  EventRecord call{};
  call.start_ticks = now_ticks();
  call.call_id = recorder.next_call_id();
  call.function = function;
  call.peer = kNoPeer;
  call.tag_or_root = kNoTagOrRoot;
  call.communicator_index = kNoCommunicator;
  return call;
}

// One rank's calls: steps of two posts per neighbour and a wait, `calls` calls in all.
void record_halo_exchange(Profiler& profiler, int rank, int ranks, long calls) {
  ThreadRecorder& recorder = *profiler.thread_recorder();
  const int neighbours[2] = {(rank + 1) % ranks, (rank + ranks - 1) % ranks};
  for (long made = 0, step = 0; made < calls; ++step) {
    std::vector<EventRecord> posted;
    for (const int neighbour : neighbours) {
      for (const FunctionId function : {kIsend, kIrecv}) {
        EventRecord call = call_now(recorder, function);
        call.peer = neighbour;
        call.tag_or_root = 7;
        (function == kIsend ? call.bytes_sent : call.bytes_recv) = 8192;
        call.request_id = call.call_id;
        call.end_ticks = now_ticks();
        recorder.record_call(call, 0);
        posted.push_back(call);
      }
    }
    EventRecord wait = call_now(recorder, kWaitall);
    wait.end_ticks = now_ticks();
    for (EventRecord completion : posted) {
      completion.kind = RecordKind::RequestCompletion;
      completion.end_ticks = wait.end_ticks;
      completion.call_id = wait.call_id;
      recorder.record_request_completion(completion);
    }
    recorder.record_call(wait, 0);
    made += 5;
    if (step % 8 == 7) {
      EventRecord allreduce = call_now(recorder, kAllreduce);
      allreduce.bytes_sent = allreduce.bytes_recv = 64;
      allreduce.end_ticks = now_ticks();
      recorder.record_call(allreduce, 0);
      ++made;
    }
  }
}

constexpr int kBatch = 256;

// Ranks first .. last - 1 of `ranks`, in this process.
int record_ranks(const std::string& directory, int first, int last, int ranks, long calls, bool trace) {
  for (int rank = first; rank < last; ++rank) {
    Config config;
    config.output_directory = directory;
    config.mode = trace ? Mode::Trace : Mode::Summary;
    config.quiet = true;
    ProcessIdentity identity{rank, ranks, fmt::format("node-{}", rank / 64), 1000 + rank};
    Profiler* profiler = Profiler::start(config, identity, kFunctions);
    if (profiler == nullptr) {
      fmt::print(stderr, "rank_files: rank {}: no rank file in {}\n", rank, directory);
      return 1;
    }
    profiler->set_run_value("world_size", std::to_string(ranks));
    profiler->set_run_value("mode", trace ? "trace" : "summary");
    record_halo_exchange(*profiler, rank, ranks, calls);
    profiler->stop();
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 5 || (std::string(argv[4]) != "summary" && std::string(argv[4]) != "trace")) {
    fmt::print(stderr, "usage: rank_files DIR RANKS CALLS summary|trace\n");
    return 2;
  }
  const std::string directory = argv[1];
  const int ranks = std::atoi(argv[2]);
  const long calls = std::atol(argv[3]);
  const bool trace = std::string(argv[4]) == "trace";
  std::filesystem::create_directories(directory);
  const auto began = std::chrono::steady_clock::now();
  for (int first = 0; first < ranks; first += kBatch) {
    const pid_t child = fork();
    if (child == 0) {
      _exit(record_ranks(directory, first, std::min(first + kBatch, ranks), ranks, calls, trace));
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fmt::print(stderr, "rank_files: recording ranks {} to {} failed\n", first, first + kBatch - 1);
      return 1;
    }
  }
  const double recorded = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  double encoded = 0;
  if (trace) {
    for (const RankTracePages::Report& report : encode_trace_pages_in(directory)) {
      encoded += report.seconds;
    }
  }
  fmt::print("rank_files: {} {} rank files of {} calls in {}: {:.1f} s recording, {:.1f} s encoding pages\n",
             ranks, argv[4], calls, directory, recorded, encoded);
  return 0;
}
