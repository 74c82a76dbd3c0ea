#pragma once
// A rank's trace rows, encoded by the rank itself at MPI_Finalize as the merged file's B-tree leaf
// pages, and its timeline tiles, so that the merge copies them instead of decoding every rank's
// chunks in turn (docs/design.md, "Ranks encode their own pages"). The ranks of a job do it in
// parallel, once their files are closed: each finds its calls' bound and span on rank 0's
// timeline (extent), the job agrees on the tile widths the merge will choose from all of them,
// and each encodes (encode). The leaves go to rank-NNNNN.sqlite-pages; the tiles, the leaves'
// rowids and what the merge checks them against go into the rank file (table trace_pages,
// docs/schema.md). A merge that finds them missing or made for another plan decodes the chunks.
#include "commlens/profiler/rank_file.hpp"
#include "commlens/profiler/timeline_tiles.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace commlens {

class SqliteDatabase;

// The rank's MPI_Init on rank 0's clock, from its closed file (rank 0's is the merged timeline's
// origin). Throws SqliteError or MergeError naming the file.
std::int64_t rank_clock_origin_ns(const std::string& rank_file, int rank);

class RankTracePages {
public:
  // Opens the rank's file, which its writer has closed.
  RankTracePages(const std::string& rank_file, int rank);
  ~RankTracePages();
  RankTracePages(const RankTracePages&) = delete;
  RankTracePages& operator=(const RankTracePages&) = delete;

  // The rank's MPI_Init on rank 0's clock: rank 0's is the merged timeline's origin.
  std::int64_t clock_origin_ns() const;

  // The bound on its calls and its span on the timeline of that origin, as the merge plan finds them.
  using Extent = TraceExtent;
  Extent extent(std::int64_t origin_ns);

  struct Report {
    std::uint64_t calls = 0;
    std::uint64_t pages = 0; // leaves written
    double seconds = 0;      // wall time with extent()'s, also in the rank's profiler_overhead row
                             // 'trace_pages' (waiting for the other ranks not counted)
  };
  // Encodes the rows and tiles (of these widths) of the calls, on the timeline of that origin.
  // Throws SqliteError, leaving the rank file as it was, when they cannot be encoded. The rank's
  // profiler_overhead row 'trace_pages' records the cost, unless the merge encodes them on the
  // rank's behalf (a merge's cost is not the rank's).
  enum class EncodedBy { Rank, Merge };
  Report encode(std::int64_t origin_ns, const std::vector<std::int64_t>& tile_widths,
                EncodedBy by = EncodedBy::Rank);

private:
  std::string path_;
  int rank_;
  std::unique_ptr<SqliteDatabase> db_;
  std::optional<std::pair<std::int64_t, Extent>> extent_; // by origin: encode() records it
  struct Cost {
    std::int64_t wall_ns = 0, cpu_ns = 0;
  } extent_cost_; // finding it: part of the encoding's cost
};

// What the merge adds up of the ranks' extents to choose the tile widths.
struct TraceExtentTotals {
  std::int64_t calls_at_most = 0;
  TileSpanTotals spans;
  void add(const TraceExtent& extent);
  std::vector<std::int64_t> tile_widths() const { return choose_tile_widths(calls_at_most, spans); }
};

// What a job's ranks do at MPI_Finalize, done in one process for the rank files in `directory`
// (a run whose ranks did not, and tests and benchmarks): one report per rank file, in rank order.
std::vector<RankTracePages::Report> encode_trace_pages_in(const std::string& directory);

} // namespace commlens
