#pragma once
// What the merge reads from the rank files before it writes a row: which files can be read, each
// rank's clock on rank 0's timeline, and the trace's call count and per-rank spans, which set the
// timeline tiles' widths. With the widths known first, the tiles are built as the calls are
// inserted instead of in a second pass over the merged file. The spans come from each lane's
// first and last chunks and the count is a bound from the chunks' counts (no other chunk is
// decoded); the merge checks the widths against the calls it wrote.
#include "commlens/profiler/sqlite.hpp"
#include "commlens/profiler/timeline_tiles.hpp"
#include "trace_materializer.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace commlens {

struct RankFile {
  int rank;
  std::string path; // a string, not a std::filesystem::path (which keeps its parsed components):
                    // the merge keeps one per rank
};

struct PlannedRank {
  RankFile file;
  ClockMap map; // the rank's times onto rank 0's timeline
};

struct MergePlan {
  std::vector<PlannedRank> ranks;        // readable, in rank order
  std::vector<int> unreadable_ranks;     // skipped, with a message on stderr
  TileSpanTotals rank_spans;             // of the readable ranks with calls
  std::vector<std::int64_t> tile_widths; // timeline_tile_levels.tile_ns, finest first
  bool has_row_tables = false;           // a file holds call or request rows (older versions)
};

// The rank files (rank-NNNNN.sqlite) in `directories`, in rank order. Throws MergeError when there
// are none, or when two folders hold a file of one rank.
std::vector<RankFile> find_rank_files(const std::vector<std::string>& directories);
std::vector<RankFile> find_rank_files(const std::filesystem::path& directory);

// A rank killed before it closed its file leaves its journal beside it; this rolls that flush back
// (merge_plan.cpp says how).
void settle_journal(const std::filesystem::path& path);

// Throws MergeError naming `path` unless the file attached as "src" is a rank file this version reads.
void check_rank_file(SqliteDatabase& merged, const std::filesystem::path& path);

// A rank's clock as its ranks row holds it.
struct RankClock {
  std::int64_t init_ns = 0;
  std::int64_t offset_ns = 0;
  double drift_ppb = 0.0;
  // Its MPI_Init on rank 0's clock: rank 0's is the merged timeline's origin.
  std::int64_t origin_ns() const { return init_ns - offset_ns; }
  // Its times onto the timeline of that origin.
  ClockMap map_onto(std::int64_t origin) const { return ClockMap{origin_ns() - origin, drift_ppb * 1e-9}; }
};
// schema: "main" for the rank file itself, or the name it is attached under.
RankClock read_rank_clock(const SqliteDatabase& db, const std::string& schema, int rank);

// Attaches a rank file read-only to `merged` as "src".
void attach_rank_file(SqliteDatabase& merged, const std::filesystem::path& path);

// Whether the attached file ("src") holds rows of `table` of its own (rank files of versions that
// made call and request rows before the merge).
bool attached_has_rows(SqliteDatabase& merged, const char* table);

// Attaches each file as "src" to `merged` in turn (detached again before returning). With
// `use_rank_pages`, a rank's calls bound and span are those it recorded with the pages it encoded
// at MPI_Finalize, where still valid (trace_pages_merge.hpp), instead of read from its chunks.
MergePlan plan_merge(SqliteDatabase& merged, const std::vector<RankFile>& files, bool use_rank_pages);

} // namespace commlens
