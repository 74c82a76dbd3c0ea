#include "trace_pages_merge.hpp"

#include "commlens/profiler/rank_file.hpp"
#include "trace_pages_format.hpp"

#include <fmt/format.h>

namespace commlens {

namespace {

std::vector<std::int64_t> attached_tile_widths(SqliteDatabase& merged) {
  std::vector<std::int64_t> widths;
  if (merged.query_int64("SELECT count(*) FROM src.sqlite_master WHERE name = 'timeline_tile_levels'") == 0) {
    return widths;
  }
  auto levels = merged.prepare("SELECT tile_ns FROM src.timeline_tile_levels ORDER BY level");
  while (levels.step()) {
    widths.push_back(levels.column_int64(0));
  }
  return widths;
}

} // namespace

std::optional<RankPagesToCopy> rank_pages_to_copy(SqliteDatabase& merged,
                                                  const std::filesystem::path& rank_file, const ClockMap& map,
                                                  const std::vector<std::int64_t>& tile_widths,
                                                  const PageShape& shape, std::string& why) {
  const auto refuse = [&why](std::string reason) {
    why = std::move(reason);
    return std::nullopt;
  };
  const std::optional<trace_pages::Record> record = trace_pages::read_record(merged, "src");
  if (!record) {
    return refuse(""); // none, or of another format: nothing to say
  }
  if (record->page_size != static_cast<std::int64_t>(shape.page_size) ||
      record->usable_size != static_cast<std::int64_t>(shape.usable_size)) {
    return refuse("pages of another size");
  }
  if (record->map.shift != map.shift || record->map.drift != map.drift) {
    return refuse("encoded on another clock map");
  }
  if (attached_tile_widths(merged) != tile_widths) {
    return refuse("tiles of other widths");
  }
  if (record->last_chunk != trace_pages::last_chunk(merged, "src")) {
    return refuse("the trace chunks changed since");
  }
  if (record->leaves.tables.size() != trace_row_tables().size()) {
    return refuse("leaves of other tables");
  }
  const std::string path = trace_pages_path(rank_file.string());
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  const std::uint64_t expected = record->leaves.pages * shape.page_size;
  if (error ? expected != 0 : size != expected) {
    return refuse("its pages file is missing or of another size");
  }
  if (trace_pages::page_check(path, record->leaves.pages, shape.page_size) != record->page_check) {
    return refuse("its pages file is not the one encoded");
  }
  return RankPagesToCopy{path, record->leaves, record->calls, record->extent};
}

std::optional<TraceMaterializer::Extent> recorded_extent(SqliteDatabase& merged, const ClockMap& map) {
  const std::optional<trace_pages::Record> record = trace_pages::read_record(merged, "src");
  if (!record || record->map.shift != map.shift || record->map.drift != map.drift ||
      record->last_chunk != trace_pages::last_chunk(merged, "src")) {
    return std::nullopt;
  }
  return record->extent;
}

LateRows copy_rank_tiles_and_late_rows(SqliteDatabase& merged) {
  merged.exec("INSERT INTO timeline_tiles SELECT * FROM src.timeline_tiles");
  return read_late_rows(merged, "src", trace_pages::kLateRows);
}

} // namespace commlens
