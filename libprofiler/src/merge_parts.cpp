#include "commlens/profiler/merge_parts.hpp"

#include "commlens/profiler/timeline_tiles.hpp"
#include "merge_part_index.hpp"
#include "merged_output.hpp"
#include "sqlite_bulk_table.hpp"
#include "trace_rows.hpp"
#include "tree_merge_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>

namespace commlens {

namespace fs = std::filesystem;
using merge_part::RankEntry;

namespace {

// The tile tables with the timeline's levels; the sources' tiles are copied into them.
void create_tile_levels(SqliteDatabase& db, const JobTimeline& timeline) {
  const TimelineTileBuilder levels(db, timeline.tile_widths);
}

// In rank order.
std::vector<int> ranks_of(const std::vector<RankEntry>& entries) {
  std::vector<int> ranks;
  for (const RankEntry& entry : entries) {
    ranks.push_back(entry.rank);
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

// The part whose file the output starts as, so that its rows are not copied: the largest of those
// in the output's folder (a part received over MPI, or one of rank 0's folder, read in place).
std::optional<std::size_t> part_to_start_from(const MergeSources& sources, const std::string& output) {
  std::optional<std::size_t> largest;
  std::uintmax_t largest_size = 0;
  const fs::path folder = fs::path(output).parent_path();
  for (std::size_t part = 0; part < sources.parts.size(); ++part) {
    const fs::path path(sources.parts[part].path);
    std::error_code error;
    const std::uintmax_t size = fs::file_size(path, error);
    if (!error && fs::equivalent(path.parent_path(), folder, error) && !error && size > largest_size) {
      largest = part;
      largest_size = size;
    }
  }
  return largest;
}

} // namespace

PartContents merge_into_part(const MergeSources& sources, const JobTimeline& timeline,
                             const std::string& path, const std::function<void(int, int)>& progress) {
  remove_with_journals(path);
  const std::optional<std::size_t> start_from = part_to_start_from(sources, path);
  if (start_from) {
    fs::rename(sources.parts[*start_from].path, path);
  }
  SqliteDatabase part = open_merged(path);
  if (!start_from) {
    create_merged_schema(part);
    create_tile_levels(part, timeline);
    part.exec(merge_part::kCreateTables);
  }
  TreeMergeInput input(part, timeline);
  if (start_from) {
    input.adopt_output_part();
  }
  input.add(sources, progress, start_from.value_or(sources.parts.size()));
  part.exec("BEGIN");
  merge_part::write_ranks(part, input.entries(), fs::path(path).parent_path().string());
  store_late_rows(part, merge_part::kLateRows, input.late_rows());
  merge_part::write_left_behind(part, input.left_behind());
  part.exec("COMMIT");
  part.close();
  return PartContents{ranks_of(input.entries()), input.left_behind()};
}

MergeResult merge_into_database(const MergeSources& sources, const JobTimeline& timeline,
                                const MergeOptions& options) {
  const std::optional<std::size_t> start_from =
      part_to_start_from(sources, MergedFile::final_path_for(options, sources.directory));
  MergedFile output(options, sources.directory, start_from ? sources.parts[*start_from].path : "");
  MergeResult result;
  result.output_path = output.final_path();
  SqliteDatabase& merged = output.db();
  TreeMergeInput input(merged, timeline);
  if (start_from) {
    input.adopt_output_part();
    merged.exec(merge_part::kDropTables);
  } else {
    create_tile_levels(merged, timeline);
  }
  input.add(sources, options.progress, start_from.value_or(sources.parts.size()));
  std::vector<RankEntry>& entries = input.entries();
  if (entries.empty()) {
    throw MergeError(fmt::format("{}: none of the job's ranks could be merged", sources.directory));
  }
  // Rowid order is rank order: the leaves go in by rank, whichever part brought them.
  std::sort(entries.begin(), entries.end(),
            [](const RankEntry& a, const RankEntry& b) { return a.rank < b.rank; });
  result.merged_ranks = ranks_of(entries);
  result.left_behind = input.left_behind();
  for (const RanksLeftBehind& ranks : result.left_behind) {
    result.missing_ranks.insert(result.missing_ranks.end(), ranks.ranks.begin(), ranks.ranks.end());
  }
  TileSpanTotals spans;
  for (const RankEntry& entry : entries) {
    if (!entry.pages_path.empty()) {
      result.calls += entry.calls;
    }
    if (entry.own_pages) {
      result.trace_pages_ranks.push_back(entry.rank);
    }
    if (entry.extent.span) {
      spans.add(*entry.extent.span);
    }
  }
  if (std::ranges::any_of(entries, [](const RankEntry& entry) { return !entry.pages_path.empty(); })) {
    std::string why;
    const std::unique_ptr<SqliteBulkLoader> bulk = SqliteBulkLoader::open(merged, trace_row_tables(), why);
    if (!bulk) {
      throw MergeError(fmt::format("{}: the trace cannot be written as pages: {}", output.path(), why));
    }
    for (const RankEntry& entry : entries) {
      if (!entry.pages_path.empty()) {
        bulk->append_leaves(entry.pages_path, entry.leaves);
      }
    }
    output.install(*bulk, input.late_rows());
    result.rows_as_pages = true;
  }
  // The widths came from a bound on the calls: when the calls written give other widths, the
  // tiles are built from the merged calls.
  if (choose_tile_widths(static_cast<std::int64_t>(result.calls), spans) != timeline.tile_widths) {
    build_timeline_tiles(merged);
  }
  record_run_values(merged, {sources.directory}, result);
  output.finish();
  return result;
}

std::vector<std::string> part_files(const std::string& part_path) {
  const SqliteDatabase part(part_path, SQLITE_OPEN_READONLY);
  std::vector<std::string> files{part_path};
  for (const RankEntry& entry :
       merge_part::read_ranks(part, "main", fs::path(part_path).parent_path().string())) {
    if (!entry.pages_path.empty()) {
      files.push_back(entry.pages_path);
    }
  }
  return files;
}

void rename_part_pages(const std::string& part_path, const std::map<std::string, std::string>& renamed) {
  SqliteDatabase part(part_path, SQLITE_OPEN_READWRITE);
  auto select = part.prepare("SELECT rank, pages_file FROM merge_part_ranks WHERE pages_file IS NOT NULL");
  auto update = part.prepare("UPDATE merge_part_ranks SET pages_file = ? WHERE rank = ?");
  part.exec("BEGIN");
  while (select.step()) {
    const auto name = renamed.find(fs::path(select.column_text(1)).filename().string());
    if (name != renamed.end()) {
      update.bind(1, std::string_view(name->second)).bind(2, select.column_int64(0)).run();
    }
  }
  select.reset();
  part.exec("COMMIT");
}

} // namespace commlens
