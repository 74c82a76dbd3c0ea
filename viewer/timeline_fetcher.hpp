#pragma once
// Reads the calls of every lane (and each rank's CUDA copies, kernels and NVTX ranges) in the visible window
// on a pool thread, with its own connection to the database, so zooming and panning never wait for SQLite. A
// new request cancels the running one; the canvas keeps drawing the last result, shifted, until the new one
// arrives.
#include "commlens/analysis/breakdowns.hpp"
#include "commlens/analysis/timeline.hpp"

#include <QFutureWatcher>
#include <QObject>

#include <filesystem>
#include <memory>

namespace commlens::viewer {

struct TimelineSnapshot {
  std::int64_t start_ns = 0, end_ns = 0, resolution_ns = 1;
  std::vector<analysis::TimelineWindow> lanes; // in the order of TimelineExtent::lanes
  // Per rank, in the order of ranks_of(extent); empty when the database has none.
  std::vector<std::vector<analysis::TimelineCopy>> copies;
  std::vector<std::vector<analysis::TimelineRange>> ranges;
  std::vector<std::vector<analysis::TimelineKernel>> kernels;
  // Messages between sends and receives in the window: only in traces of at most kMessageTraceCalls
  // calls (matching counts every earlier call of a rank), zoomed in to at most kMessageWindowCalls
  // calls of which at most kMessageLines sends, so the lines stay apart.
  std::vector<analysis::TimelineMessage> messages;
};

inline constexpr std::uint64_t kMessageTraceCalls = 1'000'000, kMessageWindowCalls = 20'000;
inline constexpr std::size_t kMessageLines = 300;

class TimelineFetcher : public QObject {
  Q_OBJECT
public:
  explicit TimelineFetcher(QObject* parent = nullptr);
  ~TimelineFetcher() override;

  // `with_kernels`: also read each rank's CUDA kernels (cuda_kernels has rows).
  void set_source(const std::filesystem::path& database, const analysis::TimelineExtent& extent,
                  bool with_kernels = false);
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
  void start(const Request& request);
  bool few_calls_in(const Request& request) const;
  void finish();

  std::filesystem::path path_;
  std::vector<analysis::TimelineLane> lanes_;
  std::uint64_t calls_ = 0; // in the whole trace, to judge a window's share
  std::int64_t trace_start_ns_ = 0, trace_end_ns_ = 0;
  std::vector<int> copy_ranks_, range_ranks_, kernel_ranks_; // ranks whose copies, ranges, kernels are read
  std::shared_ptr<const analysis::Database> connection_;     // used by one pool task at a time
  QFutureWatcher<TimelineSnapshot> watcher_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  std::optional<Request> pending_;
  TimelineSnapshot snapshot_;
  QString error_;
};

} // namespace commlens::viewer
