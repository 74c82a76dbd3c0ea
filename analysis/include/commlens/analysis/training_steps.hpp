#pragma once
// Training steps: the phases a training loop marks, one per step (examples/dl). A step phase is one
// opened at level 2 (MPI_Pcontrol(2), or an NVTX range named as COMMLENS_STEP_RANGE says) and
// closed by a later phase on the same rank; phase 0 (set-up), the phase after the last step
// (tear-down) and phases opened at level 3 or above (the time between NVTX step ranges) are not
// steps. Per-step figures are per rank: totals over the steps' (rank, phase) pairs divided by their
// number, so a program that does the same every step shows exact integers.
//
// Where the GPU's time went in a step (Holistic Trace Analysis' temporal breakdown, per step): from
// the kernels recorded in it, compute kernels against communication kernels (NCCL's, and those
// launched inside MPI calls), how much communication ran while compute did (overlapped) and how
// much alone (exposed: the step waits for it), and the time the GPU ran nothing.
#include <cstdint>
#include <string>
#include <vector>

namespace commlens::analysis {

class Database;
struct ReportFilter;

struct TrainingStep {
  int phase = 0;
  int ranks = 0;
  std::int64_t start_ns = 0;         // earliest start across ranks
  std::int64_t duration_ns = 0;      // the longest rank's time in the phase
  std::int64_t mpi_ns = 0;           // time in MPI calls, mean over ranks
  std::uint64_t calls = 0;           // MPI calls, summed over ranks (MPI_Pcontrol included)
  std::uint64_t allreduce_calls = 0; // MPI and NCCL allreduces
  std::uint64_t allreduce_bytes = 0; // bytes each rank contributes, summed over ranks
  // The GPU, mean over the ranks whose kernels were recorded in this step (kernel_recording);
  // gpu_ranks 0: no rank's were, and the figures stay 0.
  int gpu_ranks = 0;
  std::int64_t gpu_compute_ns = 0;       // union of the compute kernels
  std::int64_t gpu_communication_ns = 0; // union of the communication kernels
  std::int64_t gpu_overlapped_ns = 0;    // communication while a compute kernel ran
  std::int64_t gpu_exposed_ns = 0;       // communication while none did
  std::int64_t gpu_idle_ns = 0;          // no kernel, copy or memset ran
  // Every step: the NCCL calls' time on the GPU (device_span_stats), summed per rank, mean of ranks.
  std::int64_t nccl_gpu_ns = 0;
};

// One function inside the steps. Totals are over every step and rank.
struct StepFunctionStats {
  std::string name;
  std::uint64_t calls = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_recv = 0;
  std::int64_t time_total_ns = 0;
  double calls_per_step = 0; // per rank
  double bytes_sent_per_step = 0;
  double bytes_recv_per_step = 0;
  double time_per_step_ns = 0;
  std::uint64_t min_calls = 0; // fewest and most calls of one rank in one step
  std::uint64_t max_calls = 0;
};

// The sizes of a step's collectives (an allreduce per fusion bucket, an all-gather and a
// reduce-scatter per FSDP shard), per function and power-of-two bin.
struct StepSizeBin {
  std::string function{}; // MPI_Allreduce, MPI_Iallreduce, nccl:AllReduce, nccl:AllGather, ...
  int size_bin = 0;
  std::string key{};
  std::string label{};
  double calls_per_step = 0;       // per rank
  double bytes_per_step = 0;       // per rank, what it contributes
  double time_per_step_ns = 0;     // host time in the calls
  double gpu_time_per_step_ns = 0; // NCCL calls: their time on the GPU (device_span_stats)
  // Trace mode: the exact sizes in the bin, "2 x 1448 B" per rank and step; empty in summary mode.
  std::string exact_sizes{};
};

struct TrainingSteps {
  std::string absent;    // why there are no steps, when there are none
  std::string marked_by; // "MPI_Pcontrol(2)" or "NVTX ranges named step"
  std::vector<TrainingStep> steps;
  int rank_steps = 0; // (rank, phase) pairs the per-step figures divide by
  // The first step when there are at least three: it pays for lazy set-up (NCCL communicators,
  // autotuning, the allocator's growth), so the shares below leave it out.
  int warmup_steps = 0;
  // Step time: median, quartiles and extremes over the steps.
  std::int64_t median_ns = 0;
  std::int64_t p25_ns = 0;
  std::int64_t p75_ns = 0;
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  std::int64_t median_mpi_ns = 0; // median over the steps of the mean time in MPI and NCCL calls per rank
  double mpi_share = 0;           // steps after the warm-up: time in MPI and NCCL calls over step time
  std::vector<StepFunctionStats> functions;  // most time first, MPI_Pcontrol left out
  std::vector<StepSizeBin> collective_sizes; // by function, then size
  // The GPU breakdown: the steps that have one ("6-8"), or why none has (gpu_absent).
  std::string gpu_steps;
  std::string gpu_absent;
  // Medians over the steps after the warm-up that have a breakdown (gpu_ranks > 0).
  std::int64_t median_gpu_compute_ns = 0;
  std::int64_t median_gpu_communication_ns = 0;
  std::int64_t median_gpu_overlapped_ns = 0;
  std::int64_t median_gpu_exposed_ns = 0;
  std::int64_t median_gpu_idle_ns = 0;
  std::int64_t median_nccl_gpu_ns = 0; // over the steps after the warm-up; 0 without device spans
  bool exact_sizes = false;            // trace mode: exact_sizes filled
  // Trace mode, steps with MPI_Iallreduce: per step and rank, how long nonblocking allreduces were
  // in flight (post to completion, their union) and the part of it the rank spent outside MPI calls
  // (computing while they were pending: backward, in overlap mode). Pending is not progressing:
  // a library without asynchronous progress moves the data inside MPI calls only.
  bool nonblocking_allreduce = false;
  double in_flight_ns = 0;
  double in_flight_outside_mpi_ns = 0;
  std::vector<std::string> pvar_headers; // MPI_T per step; empty without samples in steps
  std::vector<std::vector<std::string>> pvar_rows;
  std::vector<std::string> copy_headers; // CUDA copies per step; empty without copies in steps
  std::vector<std::vector<std::string>> copy_rows;
  // commlens's own time on the threads that copy, per step: its time per CUDA runtime call
  // (profiler_overhead row cuda_runtime_calls, estimated from a sample) times the copies per step
  // and rank. 0 where copies came from CUPTI or none were made in the steps.
  double copies_per_step = 0;
  std::int64_t profiler_ns_per_call = 0;
  double profiler_ns_per_step = 0;
};

TrainingSteps query_training_steps(const Database& database, const ReportFilter& filter);

} // namespace commlens::analysis
