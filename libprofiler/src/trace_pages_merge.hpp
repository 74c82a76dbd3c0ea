#pragma once
// The merge's side of the pages ranks encode at MPI_Finalize (trace_pages.hpp): whether an
// attached rank file's pages are still what decoding its chunks would write into this merge, and
// copying what the rank file holds besides its leaves.
#include "commlens/profiler/sqlite.hpp"
#include "sqlite_bulk_table.hpp"
#include "trace_materializer.hpp"
#include "trace_rows.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace commlens {

struct RankPagesToCopy {
  std::string path; // the leaves' file
  SqliteBulkLoader::SavedLeaves leaves;
  std::uint64_t calls = 0;
  TraceMaterializer::Extent extent; // as recorded with them: what the merge plan would find
};

// The pages of the rank file attached as "src" when they hold its chunks' rows on this timeline
// (`map`), in pages of the merged file's `shape`, and its tiles are of these widths; otherwise
// nullopt, with the reason in `why` (empty when the file has no pages this version reads).
std::optional<RankPagesToCopy> rank_pages_to_copy(SqliteDatabase& merged,
                                                  const std::filesystem::path& rank_file, const ClockMap& map,
                                                  const std::vector<std::int64_t>& tile_widths,
                                                  const PageShape& shape, std::string& why);

// The extent (TraceMaterializer::extent()) that the rank attached as "src" recorded with its pages
// when it is that of its chunks on this timeline: the plan then reads no chunk of that rank.
std::optional<TraceMaterializer::Extent> recorded_extent(SqliteDatabase& merged, const ClockMap& map);

// Copies src's timeline tiles into the merged file; returns the rows its encoder left to INSERTs
// (TraceRowWriter::take_late_rows()).
LateRows copy_rank_tiles_and_late_rows(SqliteDatabase& merged);

} // namespace commlens
