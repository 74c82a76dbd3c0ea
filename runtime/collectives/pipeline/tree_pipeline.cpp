#include "collectives/pipeline/tree_pipeline.hpp"

#include <cuda_runtime.h>

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

int run_event_driven(CommunicatorEngine& engine, const PipelineRun& run, const SegmentWork& work,
                     std::uint64_t base) {
  const std::uint32_t segments = run.segments.count();
  thread_local EventRing events;
  cudaStream_t stream = static_cast<cudaStream_t>(stream_of(engine, run));
  trees::SegmentWindow window(segments, run.window);
  int error =
      events.resize(std::max<std::uint32_t>(run.window, 1)) ? 0 : static_cast<int>(cudaErrorMemoryAllocation);
  for (int idle = 0; !window.done();) {
    if (run.noise != nullptr) {
      run.noise->point();
    }
    bool progressed = false;
    const std::uint32_t available = ready(engine, run.upstream, base, segments);
    while (window.can_issue(available)) {
      const std::uint32_t index = window.issue();
      if (error == 0) {
        error = work(index, stream);
      }
      if (error == 0) {
        error = cudaEventRecord(events[index], stream);
      }
      progressed = true;
    }
    while (window.in_flight() > 0) {
      const cudaError_t state = error == 0 ? cudaEventQuery(events[window.oldest()]) : cudaSuccess;
      if (state == cudaErrorNotReady) {
        break;
      }
      error = error != 0 ? error : static_cast<int>(state);
      window.complete_oldest();
      announce(engine, base + window.completed());
      progressed = true;
    }
    idle = progressed ? 0 : idle + 1;
    if (!progressed) {
      pause_spinning(idle);
    }
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

int run_pipeline(CommunicatorEngine& engine, const PipelineRun& run, const SegmentWork& work) {
  const std::uint32_t segments = run.segments.count();
  const std::uint64_t base = engine.segment_base(segments);
  int error = 0;
  if (!run.has_work && !run.blocking) {
    announce(engine, base + segments);
  } else {
    error = run.blocking ? run_blocking(engine, run, work, base) : run_event_driven(engine, run, work, base);
  }
  wait_for_readers(engine, run, base + segments);
  return error;
}

} // namespace commlens::runtime
