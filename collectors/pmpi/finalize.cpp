// MPI_Finalize before PMPI_Finalize: the clock exchange, the rank file's close, the job's agreement
// on its merged file's timeline and the merge, as a tree for a job alone in its run
// (finalize_merge.hpp) or by the last job's rank 0.
#include "finalize.hpp"

#include "clock_alignment.hpp"
#include "collector_hooks.hpp"
#include "collector_registration.hpp"
#include "detached_requests.hpp"
#include "device_staging.hpp"
#include "file_transfer.hpp"
#include "finalize_merge.hpp"
#include "finalize_pages.hpp"
#include "finalize_topology.hpp"
#include "function_ids.hpp"

#include "commlens/profiler/job_registry.hpp"
#include "commlens/profiler/merge.hpp"

#include <cstdio>
#include <ranges>
#include <string>

namespace commlens::pmpi {

namespace {

// Without the merge rank 0 has no database to read the ranks' losses from: the ranks add them up
// (every rank has the same setting, so every rank takes part).
void report_unmerged_run(const Profiler& profiler, const Config& config) {
  const Profiler::Losses mine = profiler.losses();
  std::uint64_t local[2] = {mine.dropped_events, mine.summary_overflow};
  std::uint64_t total[2] = {0, 0};
  PMPI_Reduce(local, total, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (profiler.identity().world_rank != 0) {
    return;
  }
  MergeResult run;
  run.world_size = profiler.identity().world_size;
  run.dropped_events = total[0];
  run.summary_overflow = total[1];
  const std::string losses = describe_losses(run);
  if (!config.quiet || !losses.empty()) {
    std::fprintf(stderr, "commlens: %d ranks profiled -> %s (rank files, not merged)%s%s\n", run.world_size,
                 config.output_directory.c_str(), losses.empty() ? "" : "; WARNING: ", losses.c_str());
  }
}

} // namespace

void merge_run_in_one_process(const Config& config) {
  try {
    MergeOptions options;
    options.directory = config.output_directory;
    options.remove_rank_files = !config.keep_rank_files;
    const MergeResult result = merge_rank_databases(options);
    // A loss is said even when quiet: the database alone would not show it.
    const std::string losses = describe_losses(result);
    if (!config.quiet || !losses.empty()) {
      const std::string jobs = result.jobs > 1 ? " in " + std::to_string(result.jobs) + " jobs" : "";
      std::fprintf(stderr, "commlens: %zu ranks profiled%s -> %s%s%s\n", result.merged_ranks.size(),
                   jobs.c_str(), result.output_path.c_str(),
                   losses.empty() ? "" : "; WARNING: ", losses.c_str());
    }
    if (!result.missing_ranks.empty()) {
      std::fprintf(stderr, "commlens: warning: no rank file for ranks %s\n",
                   describe_ranks(result.missing_ranks).c_str());
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "commlens: merging the rank databases failed: %s\n", error.what());
  }
}

// On each job's rank 0, once the job's rank files are closed. Only the last job of the run to
// finish merges: the others' files may still be open.
void finish_job_and_merge_if_last(const Config& config, const ProcessIdentity& identity) {
  if (identity.world_rank != 0) {
    return;
  }
  const auto merge = [&config] {
    if (config.merge_at_finalize) {
      merge_run_in_one_process(config);
    }
  };
  try {
    if (!finish_job(config.output_directory, identity.job, merge) && config.merge_at_finalize &&
        !config.quiet) {
      std::fprintf(stderr, "commlens: job %d finished; the run's last job to finish merges\n", identity.job);
    }
  } catch (const std::runtime_error& error) {
    std::fprintf(stderr, "commlens: cannot mark job %d finished in %s; merging now\n", identity.job,
                 error.what());
    merge();
  }
}

// MPI_Finalize's part before PMPI_Finalize, with the communicators it makes freed on return.
void finish_profiling(Profiler* const profiler) {
  const std::uint64_t entered = now_ticks();
  const std::uint64_t began = monotonic_ns();
  // Every exchange of the finalize is on private duplicates: the application may still have
  // receives posted on MPI_COMM_WORLD.
  const FinalizeTopology topology(profiler->config().output_directory);
  // The ranks' only clock exchange (MPI_Init has none, so no rank waits for another there).
  const ProcessIdentity& started = profiler->identity();
  const std::int64_t rate_ppb =
      rate_against_monotonic_ppb(profiler->clock(), {started.mpi_init_ticks, started.mpi_init_ns});
  const ClockSample final_clock = measure_clock_offset(topology, profiler->clock(), rate_ppb);
  profiler->set_clock_alignment(alignment_at_init(final_clock, rate_ppb, profiler->init_ns()));
  profiler->add_overhead("finalize", 1, monotonic_ns() - began);
  detached_requests::finish_all(); // freed requests still in flight: MPI completes them now
  // Pinned images, freed while the runtime's CUDA calls still serve; the run table says how much.
  if (const staged_requests::PinnedUsage pinned = staged_requests::release_all(); pinned.peak_bytes > 0) {
    profiler->set_run_value("host_staging_memory",
                            std::to_string(pinned.peak_bytes >> 10) + " KiB pinned at most, " +
                                std::to_string(pinned.left_bytes >> 10) + " KiB after finalize");
  }
  // The call as far as commlens can store it: PMPI_Finalize itself runs after the rank file closed.
  record_lifecycle_call(*profiler, fn::MPI_Finalize, MPI_COMM_WORLD, entered, now_ticks());
  // Last started, first finished: the runtime's last copies and its IPC closes happen while the
  // CUDA collector still records them (ipc_events then shows every mapping closed).
  for (const contract::CollectorSlot& slot : std::views::reverse(contract::collector_hooks().slots)) {
    if (slot.finalize != nullptr) {
      slot.finalize();
    }
  }
  for (const CollectorLifecycle& collector : linked_collectors()) {
    if (collector.finished != nullptr) {
      collector.finished();
    }
  }
  const Config config = profiler->config();
  const ProcessIdentity identity = profiler->identity();
  const int kept_file = profiler->keeps_rank_file() ? 1 : 0;
  const std::string rank_file = profiler->stop();
  // While the merge would wait for the last rank anyway, every rank turns its own chunks into the
  // merged file's pages, so that the merge copies them.
  const JobAgreement agreement =
      agree_on_timeline_and_encode_pages(topology.world(), config, identity, rank_file, kept_file != 0);
  // Every rank file of the job is closed before rank 0 goes on; the count is the start-up check
  // MPI_Init no longer makes. The ranks that encoded their pages first wait for the others without
  // spinning: where ranks outnumber cores they would take the cores from those still encoding.
  int files_kept = 0;
  MPI_Request counted = MPI_REQUEST_NULL;
  PMPI_Iallreduce(&kept_file, &files_kept, 1, MPI_INT, MPI_SUM, topology.world(), &counted);
  wait_without_spinning(counted);
  if (files_kept == 0) {
    return; // every rank said why it kept nothing
  }
  if (!config.merge_at_finalize) {
    report_unmerged_run(*profiler, config);
  }
  if (agreement.merge_as_tree) {
    merge_job_as_tree(TreeMergeJob{config, identity, agreement.timeline, topology, kept_file != 0});
  } else if (identity.job >= 0) {
    finish_job_and_merge_if_last(config, identity);
  } else if (identity.world_rank == 0) {
    std::fprintf(stderr,
                 "commlens: %d of %d ranks kept their files in %s; this job is not registered there, "
                 "run `commlens merge` on that folder\n",
                 files_kept, identity.world_size, config.output_directory.c_str());
  }
}

} // namespace commlens::pmpi
