#pragma once
// Pipelined copies between two GPUs through a ring of pinned host stages (Temuçin's "High-Performance
// Interconnect-Aware MPI communication for Deep Learning Workloads", ch. 4 and 5, multi-path
// striping): the writer copies its data chunk by chunk from its GPU into the stages over its own PCIe link,
// the reader copies each staged chunk onto its GPU over its link, and successive chunks' copies overlap. Two
// counters in shared memory hand the stages over: chunks staged (by the writer) and chunks consumed (by the
// reader). Both only grow, so a ring serves call after call; each transfer starts at the counters' common
// value, its base. The striped allreduce (host_stripe.hpp) runs a writer and a reader on each of two ranks; a
// striped rendezvous (rendezvous_protocol.hpp) runs the writer on the sender and the reader on the
// receiver.
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace commlens::runtime {

// Small enough that the pipeline fills quickly (a chunk's D2H + H2D is about 0.16 ms over PCIe
// Gen5), large enough that each copy runs at full speed.
inline constexpr std::size_t kStageChunkBytes = std::size_t{4} << 20;
inline constexpr int kStages = 8;
inline constexpr std::size_t kStageRingBytes = kStageChunkBytes * kStages;

struct alignas(64) StageRingCounters {
  std::atomic<std::uint64_t> staged;      // chunks the writer has put in the stages (every transfer)
  std::atomic<std::uint64_t> consumed;    // chunks the reader has copied out
  std::atomic<std::int32_t> writer_error; // the current transfer's CUDA error on the writer's side
};

// A ring as one process sees it: its counters and its kStages stages, pinned in this process.
struct StageRing {
  StageRingCounters* counters = nullptr;
  char* stages = nullptr;

  char* stage(std::uint64_t chunk) const noexcept { return stages + (chunk % kStages) * kStageChunkBytes; }
};

// A stream and an event per stage: the copies of one direction on one rank.
class CopyLane {
public:
  CopyLane() = default;
  CopyLane(const CopyLane&) = delete;
  CopyLane& operator=(const CopyLane&) = delete;
  ~CopyLane();
  // A non-blocking stream: callers wait for the program's work on the legacy stream themselves.
  bool open();
  bool is_open() const noexcept { return stream_ != nullptr && events_[kStages - 1] != nullptr; }
  void* stream() const noexcept { return stream_; } // cudaStream_t
  void* event(std::uint64_t chunk) const noexcept { return events_[chunk % kStages]; }

private:
  void* stream_ = nullptr;
  void* events_[kStages] = {};
};

// One transfer's steps on either side, taken as soon as each may run by a polling loop that calls
// step() until done(). No kernel runs here: a caller's NVLink kernel may hold every SM.
class StageTransfer {
public:
  // The writer: `bytes` from the device at `source` into the ring.
  static StageTransfer writer(const StageRing& ring, const CopyLane& lane, const void* source,
                              std::size_t bytes);
  // The reader: `bytes` from the ring to the device at `destination` (null: consume without copying,
  // so the writer still finishes after an error here).
  static StageTransfer reader(const StageRing& ring, const CopyLane& lane, void* destination,
                              std::size_t bytes);

  // Issues or completes what it can; true when it made progress.
  bool step();
  bool done() const noexcept { return finished_ == chunks_; }
  // This side's CUDA error; a reader that is done reports the writer's too.
  int cuda_error() const noexcept;
  std::uint32_t chunks() const noexcept { return static_cast<std::uint32_t>(chunks_); }

private:
  StageTransfer(const StageRing& ring, const CopyLane& lane, char* device, std::size_t bytes, bool writes);
  std::size_t chunk_bytes(std::uint64_t chunk) const noexcept;

  StageRing ring_;
  const CopyLane* lane_;
  char* device_;
  std::size_t bytes_;
  bool writes_; // device -> stages
  std::uint64_t base_;
  std::uint64_t chunks_;
  std::uint64_t issued_ = 0;   // copies queued
  std::uint64_t finished_ = 0; // copies done and handed over (staged, or stage released)
  int error_ = 0;
};

} // namespace commlens::runtime
