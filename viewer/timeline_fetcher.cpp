#include "timeline_fetcher.hpp"

#include "timeline_rows.hpp"

#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/kernel_names.hpp"

#include <QtConcurrent/QtConcurrentRun>

#include <set>

namespace commlens::viewer {
namespace {

// The ranks with a GPU stream or CUDA API lane, ascending.
template <typename Lane> std::set<int> ranks_with(const std::vector<Lane>& lanes) {
  std::set<int> ranks;
  for (const auto& lane : lanes)
    ranks.insert(lane.rank);
  return ranks;
}

// Puts each item of `items` on its stream's lane (`lane_of` gives the index, -1 for none).
template <typename Item, typename LaneOf, typename Add>
void distribute(std::vector<Item> items, LaneOf lane_of, Add add) {
  for (auto& item : items)
    if (const int lane = lane_of(item); lane >= 0)
      add(static_cast<std::size_t>(lane), std::move(item));
}

} // namespace

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
                                 const analysis::TimelineExtent& extent,
                                 const std::vector<analysis::GpuStream>& streams, bool with_synchronizations,
                                 const std::vector<analysis::CudaApiThread>& api_threads) {
  pending_.reset();
  if (cancel_)
    cancel_->store(true);
  watcher_.waitForFinished();
  path_ = database;
  calls_ = extent.calls;
  trace_start_ns_ = extent.start_ns;
  trace_end_ns_ = extent.end_ns;
  source_ = {nullptr,
             extent.lanes,
             extent.has_ranges ? ranks_of(extent) : std::vector<int>{},
             with_synchronizations ? ranks_of(extent) : std::vector<int>{},
             streams,
             api_threads,
             std::make_shared<std::unordered_map<std::string, QString>>(),
             source_.generation + 1};
  snapshot_ = {};
  if (source_.lanes.empty())
    return;
  try {
    source_.connection = std::make_shared<const analysis::Database>(path_);
  } catch (const analysis::AnalysisError& error) {
    emit failed(QString::fromStdString(error.what()));
  }
}

void TimelineFetcher::request(std::int64_t start_ns, std::int64_t end_ns, std::int64_t resolution_ns) {
  if (!source_.connection)
    return;
  const Request request{start_ns, end_ns, resolution_ns};
  if (watcher_.isRunning()) {
    pending_ = request;
    cancel_->store(true);
    return;
  }
  // An earlier request may still wait for a read that has finished but not been collected: this
  // newer one replaces it.
  pending_.reset();
  start(request);
}

TimelineSnapshot TimelineFetcher::read(const Source& source, const Request& request, bool with_messages,
                                       const std::atomic<bool>& cancel) {
  const auto& database = *source.connection;
  const auto from = request.start_ns, to = request.end_ns;
  TimelineSnapshot snapshot{from, to,    request.resolution_ns, {}, {}, {}, {}, {},
                            {},   false, source.generation};
  for (const auto& lane : source.lanes) {
    if (cancel.load())
      return snapshot;
    snapshot.lanes.push_back(
        analysis::query_timeline_window(database, lane, from, to, request.resolution_ns, &cancel));
  }
  for (const int rank : source.range_ranks)
    snapshot.ranges.push_back(analysis::query_timeline_ranges(database, rank, from, to));
  for (const int rank : source.synchronization_ranks)
    snapshot.synchronizations.push_back(analysis::query_timeline_synchronizations(database, rank, from, to));
  snapshot.streams.resize(source.streams.size());
  auto& streams = snapshot.streams;
  const auto& lanes = source.streams;
  snapshot.api_calls.resize(source.api_threads.size());
  for (const int rank : ranks_with(source.api_threads))
    distribute(
        analysis::query_timeline_api_calls(database, rank, from, to),
        [&](const auto& call) { return analysis::api_lane(source.api_threads, rank, call.system_thread); },
        [&](std::size_t lane, analysis::TimelineApiCall call) {
          snapshot.api_calls[lane].push_back(std::move(call));
        });
  for (const int rank : ranks_with(lanes)) {
    if (cancel.load())
      return snapshot;
    distribute(
        analysis::query_timeline_kernels(database, rank, from, to),
        [&](const auto& kernel) { return analysis::stream_lane(lanes, rank, kernel.device, kernel.stream); },
        [&](std::size_t lane, analysis::TimelineKernel kernel) {
          auto& name = (*source.short_names)[kernel.name];
          if (name.isEmpty())
            name = QString::fromStdString(analysis::short_kernel_name(kernel.name));
          const bool communication = analysis::kernel_kind(kernel.name, kernel.mpi_call_id.has_value()) ==
                                     analysis::KernelKind::Communication;
          streams[lane].kernels.push_back({std::move(kernel), name, communication});
        });
    distribute(
        analysis::query_timeline_copies(database, rank, from, to),
        [&](const auto& copy) { return analysis::stream_lane(lanes, rank, copy.device, copy.stream); },
        [&](std::size_t lane, analysis::TimelineCopy copy) {
          streams[lane].copies.push_back(std::move(copy));
        });
    distribute(
        analysis::query_timeline_memsets(database, rank, from, to),
        [&](const auto& memset) { return analysis::stream_lane(lanes, rank, memset.device, memset.stream); },
        [&](std::size_t lane, analysis::TimelineMemset memset) { streams[lane].memsets.push_back(memset); });
    distribute(
        analysis::query_timeline_device_spans(database, rank, from, to),
        [&](const auto& span) { return analysis::span_lane(lanes, rank, span.nccl_stream); },
        [&](std::size_t lane, analysis::TimelineDeviceSpan span) { streams[lane].spans.push_back(span); });
  }
  if (with_messages)
    snapshot.messages = analysis::query_timeline_messages(database, from, to, kMessageLines);
  snapshot.complete = !cancel.load();
  return snapshot;
}

void TimelineFetcher::start(const Request& request) {
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  watcher_.setFuture(
      QtConcurrent::run([source = source_, cancel = cancel_, request, with_messages = few_calls_in(request)] {
        return read(source, request, with_messages, *cancel);
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
  if (result.complete && result.source_generation == source_.generation) {
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
