#include "collectives/pipeline/tree_pipeline.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace commlens::runtime {

namespace {

// Events for the segments in flight, kept per thread (creating one costs microseconds).
class EventRing {
public:
  cudaEvent_t& operator[](std::uint32_t index) { return events_[index % events_.size()]; }
  // Indexing is modulo the ring's size: one event per segment the window holds in flight.
  bool resize(std::uint32_t count) {
    while (events_.size() > count) {
      cudaEventDestroy(events_.back());
      events_.pop_back();
    }
    while (events_.size() < count) {
      cudaEvent_t event = nullptr;
      if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) {
        return false;
      }
      events_.push_back(event);
    }
    return true;
  }

private:
  std::vector<cudaEvent_t> events_;
};

std::uint64_t counter(CommunicatorEngine& engine, int rank) {
  return engine.segment().slot(rank).segments_done.load(std::memory_order_acquire);
}

void announce(CommunicatorEngine& engine, std::uint64_t value) {
  engine.segment().slot(engine.rank()).segments_done.store(value, std::memory_order_release);
}

// Segments every upstream rank has finished (the least of their counters, above the call's base).
std::uint32_t ready(CommunicatorEngine& engine, std::span<const int> upstream, std::uint64_t base,
                    std::uint32_t segments) {
  std::uint64_t least = base + segments;
  for (const int rank : upstream) {
    least = std::min(least, counter(engine, rank));
  }
  return static_cast<std::uint32_t>(least - base);
}

void* stream_of(CommunicatorEngine& engine, const PipelineRun& run) {
  return run.stream != nullptr ? run.stream : engine.stream();
}

void wait_for_readers(CommunicatorEngine& engine, const PipelineRun& run, std::uint64_t end) {
  for (const int reader : run.readers) {
    for (int spins = 0; counter(engine, reader) < end; ++spins) {
      if (run.noise != nullptr) {
        run.noise->point();
      }
      pause_spinning(spins);
    }
  }
}

int run_blocking(CommunicatorEngine& engine, const PipelineRun& run, const SegmentWork& work,
                 std::uint64_t base) {
  const std::uint32_t segments = run.segments.count();
  void* stream = stream_of(engine, run);
  int error = 0;
  for (std::uint32_t index = 0; index < segments; ++index) {
    if (run.has_work) {
      for (int spins = 0; ready(engine, run.upstream, base, segments) <= index; ++spins) {
        pause_spinning(spins);
      }
      if (error == 0) {
        error = work(index, stream);
      }
      if (error == 0) {
        error = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
      }
    }
    announce(engine, base + index + 1);
    if (run.noise != nullptr) {
      run.noise->point();
    }
    engine.segment().barrier(engine.next_barrier());
  }
  return error;
}

// The streams a call spreads its segments over: the call's own first, then the extra ones.
std::vector<void*> streams_of(CommunicatorEngine& engine, const PipelineRun& run, std::uint32_t segments) {
  void* first = stream_of(engine, run);
  const std::uint32_t wanted = std::clamp<std::uint32_t>(std::min(run.streams, segments), 1, 64);
  if (wanted == 1) {
    return {first};
  }
  StreamSet& more = run.more_streams != nullptr ? *run.more_streams : engine.tree_streams();
  return more.with(first, wanted);
}

// The extra streams start after what the call's own stream holds (its earlier work, the wait for
// the buffers' producers); returns a CUDA error code.
int fork_streams(std::span<void* const> streams) {
  thread_local cudaEvent_t forked = nullptr;
  if (forked == nullptr && cudaEventCreateWithFlags(&forked, cudaEventDisableTiming) != cudaSuccess) {
    forked = nullptr;
    return static_cast<int>(cudaErrorMemoryAllocation);
  }
  int error = static_cast<int>(cudaEventRecord(forked, static_cast<cudaStream_t>(streams[0])));
  for (std::size_t i = 1; error == 0 && i < streams.size(); ++i) {
    error = static_cast<int>(cudaStreamWaitEvent(static_cast<cudaStream_t>(streams[i]), forked, 0));
  }
  return error;
}

int run_event_driven(CommunicatorEngine& engine, const PipelineRun& run, const SegmentWork& work,
                     std::uint64_t base, std::span<void* const> streams) {
  const std::uint32_t segments = run.segments.count();
  const auto stream_count = static_cast<std::uint32_t>(streams.size());
  thread_local EventRing events;
  trees::SegmentWindow window(segments, run.window);
  int error =
      events.resize(std::max<std::uint32_t>(run.window, 1)) ? 0 : static_cast<int>(cudaErrorMemoryAllocation);
  if (error == 0 && stream_count > 1) {
    error = fork_streams(streams);
  }
  const auto fired = [&](std::uint32_t index) {
    if (error != 0) {
      return true; // after an error the segments count as done, so that peers are not held up
    }
    const cudaError_t state = cudaEventQuery(events[index]);
    if (state == cudaErrorNotReady) {
      return false;
    }
    error = static_cast<int>(state);
    return true;
  };
  for (int idle = 0; !window.done();) {
    if (run.noise != nullptr) {
      run.noise->point();
    }
    bool progressed = false;
    const std::uint32_t available = ready(engine, run.upstream, base, segments);
    while (window.can_issue(available)) {
      const std::uint32_t index = window.issue();
      void* stream = streams[trees::stream_of_segment(index, stream_count)];
      if (error == 0) {
        error = work(index, stream);
      }
      if (error == 0) {
        error = cudaEventRecord(events[index], static_cast<cudaStream_t>(stream));
      }
      progressed = true;
    }
    if (window.poll(stream_count, fired)) {
      announce(engine, base + window.completed());
      progressed = true;
    }
    idle = progressed ? 0 : idle + 1;
    if (!progressed) {
      pause_spinning(idle);
    }
  }
  // Every event fired, unless an error cut the polling short: then, on several streams, wait for
  // what any of them still holds (one stream keeps the one-stream pipeline's behaviour).
  for (std::size_t i = 0; stream_count > 1 && i < streams.size(); ++i) {
    cudaStreamSynchronize(static_cast<cudaStream_t>(streams[i]));
  }
  return error;
}

} // namespace

std::uint32_t rank_mask(std::span<const int> ranks) noexcept {
  std::uint32_t mask = 0;
  for (const int rank : ranks) {
    mask |= 1U << rank;
  }
  return mask;
}

trees::Tree engine_tree(const CommunicatorEngine& engine, int root, const trees::LevelShapes& shapes) {
  std::vector<trees::Placement> placements;
  for (const int gpu : engine.gpu_of_rank()) {
    placements.push_back({0, gpu});
  }
  return trees::build_tree(placements, root, shapes);
}

PipelineResult run_pipeline(CommunicatorEngine& engine, const PipelineRun& run, const SegmentWork& work) {
  const std::uint32_t segments = run.segments.count();
  const std::uint64_t base = engine.segment_base(segments);
  PipelineResult result;
  if (!run.has_work && !run.blocking) {
    announce(engine, base + segments);
  } else if (run.blocking) {
    result.error = run_blocking(engine, run, work, base);
  } else {
    const std::vector<void*> streams = streams_of(engine, run, segments);
    result.streams = static_cast<std::uint32_t>(streams.size());
    result.error = run_event_driven(engine, run, work, base, streams);
  }
  wait_for_readers(engine, run, base + segments);
  return result;
}

void record_tree_run(const TreeSettings& settings, const TreeOutcome& outcome, RuntimeOp& row) {
  record_ran(outcome.result, row);
  row.implementation = Implementation::Tree;
  // One stream, today's name; more, the name says how many (every rank the same: the setting).
  const std::string streams =
      !settings.blocking && settings.streams > 1 ? fmt::format(":streams={}", settings.streams) : "";
  row.algorithm = fmt::format("{}:{}:segment={}:window={}{}{}", settings.blocking ? "blocking_tree" : "tree",
                              trees::describe(settings.shapes), outcome.segment_bytes, settings.window,
                              streams, settings.push ? ":push" : "");
  row.chunks = outcome.segments;
  row.streams = outcome.streams;
}

} // namespace commlens::runtime
