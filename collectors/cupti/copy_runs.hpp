#pragma once
// What keeps summary mode's copies bounded. A training step makes hundreds of copies (DDP copies
// every gradient into its bucket and back: about 370 a step on ResNet-50, 10,000 a second a rank),
// and a cuda_copies row is about 86 bytes: a row each would be 3 GB an hour a rank. So in summary
// mode the copies taken from the runtime's calls that were not timed on the GPU, made one after
// another by one thread along one route (devices, memory kinds, direction), on one stream, in one
// MPI or NCCL call (or outside any) and in one phase, with pauses of at most a gap between them,
// are stored as one row standing for all of them (cuda_copies.copies): their bytes summed, from the
// first call's start to the last one's end. The copies timed on the GPU stay rows of their own.
// No CUDA here: unit-tested on any machine.
#include "cuda_records.hpp"

#include <cstdint>
#include <vector>

namespace commlens::cuda {

// A copy taken from the runtime's calls, as its thread hands it to the writer.
struct CopyCall {
  CudaCopy copy;             // start_ns and end_ns on the profiler's clock
  std::uint64_t call_id = 0; // the MPI or NCCL call it was made in; 0: none
  bool gpu_timed = false;    // start_ns and end_ns are its time on the GPU, not its call's
  std::uint32_t thread = 0;  // the copying thread (gettid)
  std::uint16_t phase = 0;   // the profiler's phase when it was made
};

// `calls` (in the order their threads made them) with each run of untimed copies merged into its
// first copy, which then counts them all (copy.copies). A copy joins the run its thread has open
// when it matches it and starts at most `max_gap_ns` after the run's end; otherwise it opens one.
std::vector<CopyCall> merge_copy_runs(std::vector<CopyCall> calls, std::uint64_t max_gap_ns);

} // namespace commlens::cuda
