#include "finalize_pages.hpp"

#include "mpi_header.hpp"

#include "commlens/profiler/job_registry.hpp"
#include "commlens/profiler/trace_pages.hpp"

#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <vector>

namespace commlens::pmpi {

namespace {

// Runs a step of this rank's encoding; a failure is said once and ends this rank's part (the
// merge decodes its chunks instead), not its part in the collectives.
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

void encode_trace_pages_at_finalize(const Config& config, const ProcessIdentity& identity,
                                    const std::string& rank_file, bool kept_file) {
  // A spawned job's timeline origin is the first job's rank 0, which it cannot ask (alike for
  // every rank of a job).
  if (identity.run_rank != identity.world_rank) {
    return;
  }
  // The settings are read per process: a rank whose own settings rule the encoding out still
  // takes part in the collectives below, so ranks launched with different environments never
  // wait for one another in different calls.
  // A traced rank that does not encode still gives its extent: the merge counts every rank's
  // calls and span when it chooses the tile widths, so the encoding ranks must count them too, or
  // their pages are refused ("tiles of other widths") whenever the missing ranks tip the choice.
  const bool traced = config.mode == Mode::Trace && kept_file;
  const bool wanted = traced && config.rank_pages;
  std::unique_ptr<RankTracePages> pages;
  bool ok = traced && attempt(identity.run_rank, [&] {
              pages = std::make_unique<RankTracePages>(rank_file, identity.run_rank);
            });
  std::int64_t origin[2] = {0, 0}; // rank 0 can encode, its clock origin
  ok = ok && attempt(identity.run_rank, [&] { origin[1] = pages->clock_origin_ns(); });
  // Rank 0 decides for the job whether its pages can fit the merge: not when the run has jobs
  // this one spawned, whose calls the tile widths would have to count too.
  bool one_job = true;
  if (identity.world_rank == 0) {
    ok = ok && attempt(identity.run_rank, [&] { one_job = read_jobs(config.output_directory).size() <= 1; });
  }
  origin[0] = ok && wanted && one_job ? 1 : 0;
  PMPI_Bcast(origin, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (origin[0] == 0) {
    return; // every rank returns here alike
  }
  std::int64_t mine[4] = {0, 0, 0, 0}; // calls at most, has a span, its start and end
  ok = ok && attempt(identity.run_rank, [&] {
         const RankTracePages::Extent extent = pages->extent(origin[1]);
         mine[0] = extent.calls_at_most;
         mine[1] = extent.span.has_value();
         mine[2] = extent.span ? extent.span->start_ns : 0;
         mine[3] = extent.span ? extent.span->end_ns : 0;
       });
  std::vector<std::int64_t> all(4 * static_cast<std::size_t>(identity.world_size));
  PMPI_Allgather(mine, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, MPI_COMM_WORLD);
  std::vector<RankTracePages::Extent> extents;
  for (std::size_t rank = 0; rank < all.size() / 4; ++rank) {
    const std::int64_t* theirs = &all[4 * rank];
    extents.push_back(RankTracePages::Extent{
        theirs[0], theirs[1] != 0 ? std::optional(TileSpan{theirs[2], theirs[3]}) : std::nullopt});
  }
  if (ok && wanted) {
    attempt(identity.run_rank, [&] { pages->encode(origin[1], tile_widths_for(extents)); });
  }
}

} // namespace commlens::pmpi
