#include "finalize_pages.hpp"

#include "commlens/profiler/job_registry.hpp"
#include "commlens/profiler/trace_pages.hpp"

#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>

namespace commlens::pmpi {

namespace {

// Runs a step of this rank's encoding; a failure is said once and ends this rank's part (the
// merge encodes or decodes its chunks instead), not its part in the collectives.
template <typename Step> bool attempt(int rank, Step&& step) {
  try {
    step();
    return true;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "commlens: rank %d: its trace pages were not encoded (the merge decodes them): %s\n",
                 rank, error.what());
    return false;
  }
}

} // namespace

JobAgreement agree_on_timeline_and_encode_pages(MPI_Comm comm, const Config& config,
                                                const ProcessIdentity& identity, const std::string& rank_file,
                                                bool kept_file) {
  // A spawned job's timeline origin is the first job's rank 0, which it cannot ask (alike for
  // every rank of a job).
  if (identity.run_rank != identity.world_rank) {
    return {};
  }
  // The settings are read per process: a rank whose own settings rule the encoding out still
  // takes part in the collectives below, so ranks launched with different environments never
  // wait for one another in different calls.
  // A traced rank that does not encode still gives its extent: the merge counts every rank's
  // calls and span when it chooses the tile widths, so the encoding ranks must count them too, or
  // their pages are refused ("tiles of other widths") whenever the missing ranks tip the choice.
  const bool traced = config.mode == Mode::Trace && kept_file;
  std::unique_ptr<RankTracePages> pages;
  bool ok = traced && attempt(identity.run_rank, [&] {
              pages = std::make_unique<RankTracePages>(rank_file, identity.run_rank);
            });
  // Rank 0 decides for the job: its clock origin, whether the run is this job alone (then its
  // pages fit the merge: a run with jobs this one spawned must count their calls too), whether the
  // merge goes as a tree.
  std::int64_t decision[4] = {0, 0, 0, 0}; // origin known, origin, one job, tree
  if (identity.world_rank == 0 && kept_file) {
    try {
      decision[1] = rank_clock_origin_ns(rank_file, identity.run_rank);
      decision[0] = 1;
      decision[2] = read_jobs(config.output_directory).size() <= 1 ? 1 : 0;
      decision[3] = decision[2] != 0 && config.merge_at_finalize ? 1 : 0;
    } catch (const std::exception& error) {
      std::fprintf(stderr,
                   "commlens: rank 0 cannot read its own file, %s: the merge takes the rank files in turn\n",
                   error.what());
    }
  }
  PMPI_Bcast(decision, 4, MPI_INT64_T, 0, comm);
  if (decision[0] == 0 || decision[2] == 0) {
    return {}; // every rank returns here alike
  }
  TraceExtent extent;
  ok = ok && attempt(identity.run_rank, [&] { extent = pages->extent(decision[1]); });
  TraceExtentTotals totals;
  totals.add(extent);
  std::int64_t sums[2] = {totals.calls_at_most, totals.spans.total_ns};
  PMPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_INT64_T, MPI_SUM, comm);
  PMPI_Allreduce(MPI_IN_PLACE, &totals.spans.longest_ns, 1, MPI_INT64_T, MPI_MAX, comm);
  totals.calls_at_most = sums[0];
  totals.spans.total_ns = sums[1];
  JobAgreement agreement{decision[3] != 0, JobTimeline{decision[1], totals.tile_widths()}};
  if (ok && config.rank_pages) {
    attempt(identity.run_rank,
            [&] { pages->encode(agreement.timeline.origin_ns, agreement.timeline.tile_widths); });
  }
  return agreement;
}

} // namespace commlens::pmpi
