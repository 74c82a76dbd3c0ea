#pragma once
// The event-driven segmented pipeline the rooted collectives run on a tree (bcast/, reduce/), after
// "ADAPT: An Event-Based Adaptive Collective Communication Framework" (Luo et al.):
// each rank starts its work on a segment as soon as the ranks it depends on (its parent for bcast,
// its children for reduce) announced that segment in their counters in the node segment's shared
// memory, keeps up to `window` segments in flight, and polls their events (cudaEventQuery),
// announcing them in order as they complete. No rank waits for all its children at once, and a
// slow rank delays only the ranks below (bcast) or above (reduce) it. As ADAPT runs a rank's GPU
// reductions on several streams, a rank may spread its segments round robin over `streams`
// streams (each segment's event recorded on its own stream), so that one segment's copy or kernel
// need not wait behind the previous one's; segments finishing out of order are announced only as
// a prefix (trees::SegmentWindow::poll).
// Blocking mode, the comparison ADAPT draws: one segment at a time on one stream, the stream
// synchronised and every rank of the node in a barrier after each segment.
#include "collectives/ipc_call.hpp"
#include "engine/communicator_engine.hpp"
#include "engine/noise_injector.hpp"
#include "trees/collective_tree.hpp"
#include "trees/segment_schedule.hpp"

#include <functional>
#include <span>

namespace commlens::runtime {

// What the tuning table and the settings chose for a call, equal on every rank.
struct TreeSettings {
  trees::LevelShapes shapes;
  std::uint64_t segment_bytes = 0;
  std::uint32_t window = 1;
  std::uint32_t streams = 1; // per rank, for its segments (COMMLENS_RUNTIME_TREE_STREAMS, else the table)
  bool blocking = false;     // COMMLENS_RUNTIME_TREE_PROGRESS=blocking
  bool background_opens = false;
  NoiseInjector* noise = nullptr;
  bool push = false; // bcast: parents write their children's buffers (tuning::TreeRule::push)
};

struct PipelineRun {
  const trees::SegmentPlan& segments;
  std::uint32_t window = 1;
  bool blocking = false;
  std::span<const int> upstream; // whose counters gate this rank's segments
  std::span<const int> readers;  // who reads this rank's buffers: it returns only after they finished
  bool has_work = true;          // false: announces every segment at once (bcast root, reduce leaf)
  NoiseInjector* noise = nullptr;
  // Where the segments' work is queued: null, the engine's stream (a blocking call on the calling
  // thread); a nonblocking call's lane passes its own, which no other thread queues on.
  void* stream = nullptr;
  // How many streams the segments go round robin on: `stream`, then streams of `more_streams`
  // (null: the engine's tree_streams(); a lane passes its own). Blocking mode uses `stream` only.
  std::uint32_t streams = 1;
  StreamSet* more_streams = nullptr;
};

// Enqueues this rank's work on segment `index` on `stream`; returns a CUDA error code (0: none).
using SegmentWork = std::function<int(std::uint32_t index, void* stream)>;

struct PipelineResult {
  int error = 0;             // the first CUDA error this rank met (0: none)
  std::uint32_t streams = 1; // the streams this rank's segments ran on (1 without work of its own)
};

// Collective over the engine's ranks (every rank calls it for the same call, after the agreement).
// After an error the rank still announces its segments, so no peer waits forever. Returns once
// the work on every stream it used is done.
PipelineResult run_pipeline(CommunicatorEngine& engine, const PipelineRun& run, const SegmentWork& work);

// The tree over the engine's ranks (one node: each rank's GPU places it).
trees::Tree engine_tree(const CommunicatorEngine& engine, int root, const trees::LevelShapes& shapes);

// One bit per rank of `ranks`.
std::uint32_t rank_mask(std::span<const int> ranks) noexcept;

// What a tree call did (bcast or reduce).
struct TreeOutcome {
  IpcResult result; // ran false: the ranks agreed to hand the call to the baseline
  std::uint32_t segments = 0;
  std::uint64_t segment_bytes = 0;
  std::uint32_t streams = 1; // the streams this rank's segments ran on
};

// The runtime_ops fields of a tree call that ran (bcast or reduce): decision, implementation, the
// algorithm named by its shapes, segment, window and streams, and what it moved and opened.
void record_tree_run(const TreeSettings& settings, const TreeOutcome& outcome, RuntimeOp& row);

} // namespace commlens::runtime
