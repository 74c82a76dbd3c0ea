#include "timeline_fetcher.hpp"

#include "timeline_rows.hpp"

#include "commlens/analysis/errors.hpp"

#include <QtConcurrent/QtConcurrentRun>

namespace commlens::viewer {

TimelineFetcher::TimelineFetcher(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcher<TimelineSnapshot>::finished, this, &TimelineFetcher::finish);
}

TimelineFetcher::~TimelineFetcher() {
  pending_.reset();
  if (cancel_)
    cancel_->store(true);
  watcher_.waitForFinished();
}

void TimelineFetcher::set_source(const std::filesystem::path& database,
                                 const analysis::TimelineExtent& extent, bool with_kernels) {
  pending_.reset();
  if (cancel_)
    cancel_->store(true);
  watcher_.waitForFinished();
  path_ = database;
  lanes_ = extent.lanes;
  calls_ = extent.calls;
  trace_start_ns_ = extent.start_ns;
  trace_end_ns_ = extent.end_ns;
  copy_ranks_ = extent.has_copies ? ranks_of(extent) : std::vector<int>{};
  range_ranks_ = extent.has_ranges ? ranks_of(extent) : std::vector<int>{};
  kernel_ranks_ = with_kernels ? ranks_of(extent) : std::vector<int>{};
  connection_.reset();
  snapshot_ = {};
  if (lanes_.empty())
    return;
  try {
    connection_ = std::make_shared<const analysis::Database>(path_);
  } catch (const analysis::AnalysisError& error) {
    emit failed(QString::fromStdString(error.what()));
  }
}

void TimelineFetcher::request(std::int64_t start_ns, std::int64_t end_ns, std::int64_t resolution_ns) {
  if (!connection_)
    return;
  const Request request{start_ns, end_ns, resolution_ns};
  if (watcher_.isRunning()) {
    pending_ = request;
    cancel_->store(true);
    return;
  }
  start(request);
}

void TimelineFetcher::start(const Request& request) {
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  watcher_.setFuture(QtConcurrent::run([connection = connection_, lanes = lanes_, copy_ranks = copy_ranks_,
                                        range_ranks = range_ranks_, kernel_ranks = kernel_ranks_,
                                        cancel = cancel_, request, with_messages = few_calls_in(request)] {
    TimelineSnapshot snapshot{request.start_ns, request.end_ns, request.resolution_ns, {}, {}, {}, {}, {}};
    for (const auto& lane : lanes) {
      if (cancel->load())
        return snapshot;
      snapshot.lanes.push_back(analysis::query_timeline_window(
          *connection, lane, request.start_ns, request.end_ns, request.resolution_ns, cancel.get()));
    }
    for (const int rank : copy_ranks)
      snapshot.copies.push_back(
          analysis::query_timeline_copies(*connection, rank, request.start_ns, request.end_ns));
    for (const int rank : range_ranks)
      snapshot.ranges.push_back(
          analysis::query_timeline_ranges(*connection, rank, request.start_ns, request.end_ns));
    for (const int rank : kernel_ranks)
      snapshot.kernels.push_back(
          analysis::query_timeline_kernels(*connection, rank, request.start_ns, request.end_ns));
    if (with_messages)
      snapshot.messages =
          analysis::query_timeline_messages(*connection, request.start_ns, request.end_ns, kMessageLines);
    return snapshot;
  }));
}

bool TimelineFetcher::few_calls_in(const Request& request) const {
  // Calls spread evenly would put this many in the window: an estimate, read from nothing.
  const auto span = std::max<std::int64_t>(1, trace_end_ns_ - trace_start_ns_);
  const double share = static_cast<double>(request.end_ns - request.start_ns) / static_cast<double>(span);
  return calls_ <= kMessageTraceCalls &&
         share * static_cast<double>(calls_) <= static_cast<double>(kMessageWindowCalls);
}

void TimelineFetcher::finish() {
  if (!watcher_.future().isValid() || watcher_.future().resultCount() == 0)
    return;
  TimelineSnapshot result;
  try {
    result = watcher_.future().result();
  } catch (const std::exception& error) {
    emit failed(QString::fromStdString(error.what()));
  }
  watcher_.setFuture(QFuture<TimelineSnapshot>());
  if (pending_) {
    const auto next = *pending_;
    pending_.reset();
    start(next);
    return; // the cancelled result is partial: keep showing the previous complete one
  }
  if (result.lanes.size() == lanes_.size() && result.copies.size() == copy_ranks_.size() &&
      result.ranges.size() == range_ranks_.size() && result.kernels.size() == kernel_ranks_.size()) {
    snapshot_ = std::move(result);
    emit updated();
  }
}

void TimelineFetcher::wait_until_idle() {
  // finish() clears the future or starts the pending request, so this ends when nothing is left.
  while (watcher_.future().isValid()) {
    watcher_.waitForFinished();
    finish();
  }
}

} // namespace commlens::viewer
