#pragma once
// Reads the calls of every lane (and each rank's NVTX ranges, CUDA API calls, CUDA synchronisations
// and the work on its GPU streams) in the visible window on a pool thread, with its own connection to the
// database, so zooming and panning never wait for SQLite. A new request cancels the running one;
// the canvas keeps drawing the last result, shifted, until the new one arrives.
#include "commlens/analysis/breakdowns.hpp"
#include "commlens/analysis/cuda_api_calls.hpp"
#include "commlens/analysis/gpu_streams.hpp"
#include "commlens/analysis/timeline.hpp"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <filesystem>
#include <memory>
#include <unordered_map>

namespace commlens::viewer {

// A kernel with its name for a label (kernel_names.hpp) and its kind.
struct StreamKernel {
  analysis::TimelineKernel kernel;
  QString short_name;
  bool communication = false;
};

// What ran on one GPU stream in the window, each kind ascending by start.
struct StreamWork {
  std::vector<StreamKernel> kernels;
  std::vector<analysis::TimelineCopy> copies;
  std::vector<analysis::TimelineMemset> memsets;
  std::vector<analysis::TimelineDeviceSpan> spans; // NCCL calls' time on the GPU
};

struct TimelineSnapshot {
  std::int64_t start_ns = 0, end_ns = 0, resolution_ns = 1;
  std::vector<analysis::TimelineWindow> lanes; // in the order of TimelineExtent::lanes
  // Per rank, in the order of ranks_of(extent); empty when the database has none.
  std::vector<std::vector<analysis::TimelineRange>> ranges;
  std::vector<std::vector<analysis::TimelineSynchronization>> synchronizations;
  std::vector<StreamWork> streams; // in the order of the GPU streams given to set_source
  // Per CUDA API thread given to set_source, in its order.
  std::vector<std::vector<analysis::TimelineApiCall>> api_calls;
  // Messages between sends and receives in the window: only in traces of at most kMessageTraceCalls
  // calls (matching counts every earlier call of a rank), zoomed in to at most kMessageWindowCalls
  // calls of which at most kMessageLines sends, so the lines stay apart.
  std::vector<analysis::TimelineMessage> messages;
  // Set when every part was read (a cancelled read stops early), and which source it was read from.
  bool complete = false;
  int source_generation = 0;
};

inline constexpr std::uint64_t kMessageTraceCalls = 1'000'000, kMessageWindowCalls = 20'000;
inline constexpr std::size_t kMessageLines = 300;

class TimelineFetcher : public QObject {
  Q_OBJECT
public:
  explicit TimelineFetcher(QObject* parent = nullptr);
  ~TimelineFetcher() override;

  // `streams`: the GPU lanes (analysis::query_gpu_streams); `with_synchronizations`: also read each
  // rank's CUDA synchronisation calls; `api_threads`: the CUDA API lanes
  // (analysis::query_cuda_api_threads).
  void set_source(const std::filesystem::path& database, const analysis::TimelineExtent& extent,
                  const std::vector<analysis::GpuStream>& streams = {}, bool with_synchronizations = false,
                  const std::vector<analysis::CudaApiThread>& api_threads = {});
  void request(std::int64_t start_ns, std::int64_t end_ns, std::int64_t resolution_ns);
  // Blocks until no request is running or pending; for the screenshot mode and tests.
  void wait_until_idle();
  const TimelineSnapshot& snapshot() const { return snapshot_; }

signals:
  void updated();
  void failed(const QString& reason);

private:
  struct Request {
    std::int64_t start_ns, end_ns, resolution_ns;
  };
  // What a pool task reads, copied into it so the UI thread may change the source meanwhile.
  struct Source {
    std::shared_ptr<const analysis::Database> connection; // used by one pool task at a time
    std::vector<analysis::TimelineLane> lanes;
    std::vector<int> range_ranks, synchronization_ranks; // ranks whose ranges and waits are read
    std::vector<analysis::GpuStream> streams;
    std::vector<analysis::CudaApiThread> api_threads;
    // Short kernel names by mangled name: demangling costs microseconds, a window has thousands.
    std::shared_ptr<std::unordered_map<std::string, QString>> short_names;
    int generation = 0; // counts set_source calls, so a late result of an earlier source is dropped
  };
  static TimelineSnapshot read(const Source& source, const Request& request, bool with_messages,
                               const std::atomic<bool>& cancel);
  void start(const Request& request);
  bool few_calls_in(const Request& request) const;
  void finish();

  std::filesystem::path path_;
  Source source_;
  std::uint64_t calls_ = 0; // in the whole trace, to judge a window's share
  std::int64_t trace_start_ns_ = 0, trace_end_ns_ = 0;
  QFutureWatcher<TimelineSnapshot> watcher_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  std::optional<Request> pending_;
  TimelineSnapshot snapshot_;
  QString error_;
};

} // namespace commlens::viewer
