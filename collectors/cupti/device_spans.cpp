#include "device_spans.hpp"

#include "device_span_stats.hpp"
#include "plugin_context.hpp"

#include <cuda.h>
#include <cupti.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace commlens::cuda {

namespace {

constexpr std::uint64_t kAnchorRenewNs = 10'000'000'000; // float milliseconds stay within 1.2 µs
constexpr std::size_t kMostPending = 1u << 14;           // calls whose work has not completed yet
constexpr std::size_t kRowsPerBatch = 1024;
// Completed spans kept for kernels whose records arrive later without their call (kernel_call).
constexpr std::uint64_t kRecentSpanNs = 60'000'000'000;
// A kernel lies in its call's span give or take this: the anchors are good to a few microseconds.
constexpr std::int64_t kKernelSlackNs = 50'000;

// A completed event whose profiler time is known: later events' times are their elapsed time from it.
struct Anchor {
  CUevent event = nullptr;
  std::uint64_t profiler_ns = 0;
};

struct Context {
  CUstream quiet_stream = nullptr; // the anchors' own stream: nothing of the program waits there
  std::vector<CUevent> free_events;
  std::shared_ptr<const Anchor> anchor;
};

// A completed span on the stream named stream_id (stream_ids), on the profiler's clock.
struct RecentSpan {
  std::uint32_t stream_id = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t call_id = 0;
};

struct PendingSpan {
  SpanDone done;
  const void* stream = nullptr;
  std::uint32_t stream_id = 0;
  CUcontext context = nullptr;
  CUevent start = nullptr;
  CUevent end = nullptr;
  std::shared_ptr<const Anchor> anchor;
};

struct Started { // the event recorded before the thread's current call
  std::uint32_t stream_id = 0;
  CUcontext context = nullptr;
  CUevent event = nullptr;
  std::shared_ptr<const Anchor> anchor;
};

std::mutex mutex;
std::map<CUcontext, Context> contexts;
std::deque<PendingSpan> pending;
std::deque<RecentSpan> recent;
std::map<std::pair<CUcontext, CUstream>, std::uint32_t> stream_ids;
bool stream_ids_from_cupti = true;
std::vector<std::vector<SqlValue>> span_rows;
DeviceSpanStats stats;
std::uint64_t calls_not_timed = 0;

thread_local Started started;
thread_local std::vector<PendingSpan> group_calls; // inside ncclGroupStart/End, waiting for the end

// Lets this thread query events while another thread captures a CUDA graph in global mode, which
// would otherwise turn the query into an error that invalidates that capture.
class RelaxedCapture {
public:
  RelaxedCapture() noexcept { cuThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCapture() { cuThreadExchangeStreamCaptureMode(&mode_); }

private:
  CUstreamCaptureMode mode_ = CU_STREAM_CAPTURE_MODE_RELAXED;
};

// In the context the event belongs to, current or not. Under the mutex.
CUevent take_event(CUcontext context, Context& state) {
  if (!state.free_events.empty()) {
    CUevent event = state.free_events.back();
    state.free_events.pop_back();
    return event;
  }
  CUevent event = nullptr;
  if (cuCtxPushCurrent(context) != CUDA_SUCCESS) {
    return nullptr;
  }
  if (cuEventCreate(&event, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    event = nullptr;
  }
  CUcontext popped = nullptr;
  cuCtxPopCurrent(&popped);
  return event;
}

// A fresh anchor when there is none or it is old. Under the mutex.
void renew_anchor(CUcontext context, Context& state) {
  const std::uint64_t now = host().now_ns();
  if (state.anchor != nullptr && now - state.anchor->profiler_ns < kAnchorRenewNs) {
    return;
  }
  if (state.quiet_stream == nullptr) {
    if (cuCtxPushCurrent(context) != CUDA_SUCCESS) {
      return;
    }
    cuStreamCreate(&state.quiet_stream, CU_STREAM_NON_BLOCKING);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  CUevent event = take_event(context, state);
  if (event == nullptr || state.quiet_stream == nullptr) {
    return;
  }
  const RelaxedCapture relaxed;
  const std::uint64_t before = host().now_ns();
  if (cuEventRecord(event, state.quiet_stream) != CUDA_SUCCESS || cuEventSynchronize(event) != CUDA_SUCCESS) {
    state.free_events.push_back(event);
    return;
  }
  const std::uint64_t after = host().now_ns();
  // The event completed between the two readings, on an idle stream soon after the first.
  // Destroyed, not pooled, when the last span timed against it completes: that may happen on any
  // thread, outside the mutex.
  state.anchor =
      std::shared_ptr<const Anchor>(new Anchor{event, before + (after - before) / 2}, [](const Anchor* old) {
        cuEventDestroy(old->event);
        delete old;
      });
}

float elapsed_ms(CUevent from, CUevent to) {
  float ms = 0;
  return cuEventElapsedTime(&ms, from, to) == CUDA_SUCCESS ? ms : 0.0F;
}

// Stores a completed span and gives its events back. Under the mutex.
void complete(PendingSpan& span) {
  const auto to_ns = [](float ms) { return static_cast<std::int64_t>(static_cast<double>(ms) * 1e6); };
  const std::int64_t start_ns =
      static_cast<std::int64_t>(span.anchor->profiler_ns) + to_ns(elapsed_ms(span.anchor->event, span.start));
  const std::int64_t duration_ns = to_ns(elapsed_ms(span.start, span.end));
  span.done(span.stream_id, start_ns, start_ns + duration_ns);
  Context& state = contexts[span.context];
  state.free_events.push_back(span.start);
  state.free_events.push_back(span.end);
  span.anchor.reset();
}

void store_span_rows() {
  if (span_rows.empty()) {
    return;
  }
  host().store_rows("INSERT INTO device_spans (call_id, rank, start_ns, end_ns) VALUES (?,?,?,?)",
                    std::move(span_rows));
  span_rows.clear();
}

// Completes the oldest calls whose work is done, in queue order. Under the mutex.
void collect_completed() {
  const RelaxedCapture relaxed;
  while (!pending.empty() && cuEventQuery(pending.front().end) == CUDA_SUCCESS) {
    complete(pending.front());
    pending.pop_front();
  }
  if (span_rows.size() >= kRowsPerBatch) {
    store_span_rows();
  }
}

// The id rows give the stream: CUPTI's where kernel records may need it (kernel_call), else the
// driver's (cuStreamGetId), which does not attach CUPTI. Under the mutex.
std::uint32_t stream_id(CUcontext context, CUstream stream) {
  auto [known, fresh] = stream_ids.try_emplace({context, stream}, 0);
  if (fresh) {
    if (stream_ids_from_cupti) {
      const bool per_thread = stream == CU_STREAM_PER_THREAD;
      cuptiGetStreamIdEx(context, stream, per_thread ? 1 : 0, &known->second);
    } else {
      unsigned long long id = 0;
      cuStreamGetId(stream, &id);
      known->second = static_cast<std::uint32_t>(id);
    }
  }
  return known->second;
}

void on_begin(const void* stream_handle) noexcept {
  started = {};
  auto* stream = static_cast<CUstream>(const_cast<void*>(stream_handle));
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  CUcontext context = nullptr;
  if (cuStreamIsCapturing(stream, &capture) != CUDA_SUCCESS || capture != CU_STREAM_CAPTURE_STATUS_NONE ||
      cuStreamGetCtx(stream, &context) != CUDA_SUCCESS) {
    return;
  }
  const std::lock_guard lock(mutex);
  const std::uint32_t id = stream_id(context, stream);
  Context& state = contexts[context];
  renew_anchor(context, state);
  CUevent event = state.anchor != nullptr ? take_event(context, state) : nullptr;
  if (event == nullptr) {
    return;
  }
  if (cuEventRecord(event, stream) != CUDA_SUCCESS) {
    state.free_events.push_back(event);
    return;
  }
  started = {id, context, event, state.anchor};
}

// Records the end event of a call on its stream and queues the span. Under the mutex.
void queue_span(PendingSpan span) {
  auto* stream = static_cast<CUstream>(const_cast<void*>(span.stream));
  Context& state = contexts[span.context];
  span.end = take_event(span.context, state);
  if (span.end == nullptr || pending.size() >= kMostPending ||
      cuEventRecord(span.end, stream) != CUDA_SUCCESS) {
    if (span.end != nullptr) {
      state.free_events.push_back(span.end);
    }
    state.free_events.push_back(span.start);
    ++calls_not_timed;
    return;
  }
  pending.push_back(std::move(span));
}

// What a completed NCCL call's span gives: its statistics, the span kernels are matched against,
// and in trace mode its row. Under the mutex.
SpanDone nccl_call_done(const contract::StreamCall& call) {
  return [call](std::uint32_t stream, std::int64_t start_ns, std::int64_t end_ns) {
    stats.add(call.function, call.comm_id, call.size_bin, call.phase, end_ns - start_ns);
    recent.push_back({stream, start_ns, end_ns, call.call_id});
    while (recent.front().end_ns + static_cast<std::int64_t>(kRecentSpanNs) < start_ns) {
      recent.pop_front();
    }
    if (host().mode == Mode::Trace) {
      span_rows.push_back({static_cast<std::int64_t>(call.call_id), std::int64_t{host().run_rank},
                           relative_ns(static_cast<std::uint64_t>(start_ns)),
                           relative_ns(static_cast<std::uint64_t>(end_ns))});
    }
  };
}

// Ends the span this thread began; timed: done runs once its work has completed.
void end_span(const void* stream, SpanDone done, bool timed, bool in_group) {
  if (started.event == nullptr) {
    return;
  }
  PendingSpan span{std::move(done), stream,  started.stream_id,        started.context,
                   started.event,   nullptr, std::move(started.anchor)};
  started = {};
  const std::lock_guard lock(mutex);
  if (!timed) {
    contexts[span.context].free_events.push_back(span.start);
  } else if (in_group) {
    group_calls.push_back(std::move(span));
  } else {
    queue_span(std::move(span));
  }
  collect_completed();
}

void on_end(const contract::StreamCall& call, bool in_group) noexcept {
  end_span(call.stream, started.event != nullptr ? nccl_call_done(call) : SpanDone{}, call.call_id != 0,
           in_group);
}

void on_group_ended() noexcept {
  if (group_calls.empty()) {
    return;
  }
  const std::lock_guard lock(mutex);
  for (PendingSpan& span : group_calls) {
    queue_span(std::move(span));
  }
  group_calls.clear();
}

} // namespace

contract::StreamWorkHooks device_span_hooks() noexcept {
  return {on_begin, on_end, on_group_ended};
}

void take_stream_ids_from_cupti(bool from_cupti) noexcept {
  stream_ids_from_cupti = from_cupti;
}

void begin_stream_span(const void* stream) noexcept {
  on_begin(stream);
}

void end_stream_span(const void* stream, SpanDone done) noexcept {
  const bool timed = static_cast<bool>(done);
  end_span(stream, std::move(done), timed, false);
}

std::uint64_t kernel_call(std::uint32_t cupti_stream, std::int64_t start_ns, std::int64_t end_ns) {
  const std::lock_guard lock(mutex);
  for (auto span = recent.rbegin(); span != recent.rend(); ++span) {
    if (span->stream_id == cupti_stream && span->start_ns - kKernelSlackNs <= start_ns &&
        end_ns <= span->end_ns + kKernelSlackNs) {
      return span->call_id;
    }
  }
  return 0;
}

void finish_device_spans() {
  const std::lock_guard lock(mutex);
  {
    const RelaxedCapture relaxed;
    for (PendingSpan& span : pending) {
      if (cuEventSynchronize(span.end) == CUDA_SUCCESS) {
        complete(span);
      } else {
        ++calls_not_timed;
      }
    }
  }
  pending.clear();
  store_span_rows();
  if (auto rows = stats.take_rows(host().run_rank); !rows.empty()) {
    host().store_rows(std::string(DeviceSpanStats::kInsertSql), std::move(rows));
  }
  if (calls_not_timed > 0) {
    host().set_run_value("device_spans_lost", std::to_string(calls_not_timed));
  }
}

} // namespace commlens::cuda
