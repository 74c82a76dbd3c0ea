#include "commlens/profiler/merge_parts.hpp"

#include "commlens/profiler/nccl_call_chunk.hpp"
#include "commlens/profiler/timeline_tiles.hpp"
#include "commlens/profiler/trace_pages.hpp"
#include "merge_part_index.hpp"
#include "merge_plan.hpp"
#include "merged_output.hpp"
#include "trace_pages_format.hpp"
#include "trace_pages_merge.hpp"
#include "trace_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

namespace commlens {

namespace fs = std::filesystem;
using merge_part::RankEntry;

namespace {

// A source attached as "src" for as long as it is needed; an open transaction is rolled back.
class AttachedSource {
public:
  AttachedSource(SqliteDatabase& db, const fs::path& path) : db_(db) { attach_rank_file(db_, path); }
  ~AttachedSource() {
    try {
      if (sqlite3_get_autocommit(db_.get()) == 0) {
        db_.exec("ROLLBACK");
      }
      db_.exec("DETACH DATABASE src");
    } catch (const SqliteError& error) {
      std::fprintf(stderr, "commlens: %s\n", error.what());
    }
  }
  AttachedSource(const AttachedSource&) = delete;
  AttachedSource& operator=(const AttachedSource&) = delete;

private:
  SqliteDatabase& db_;
};

// The sources of one node of the tree, merged into `out`: tables and tiles copied, the ranks
// collected into the per-rank index with where their leaves are.
class TreeMergeInput {
public:
  TreeMergeInput(SqliteDatabase& out, const JobTimeline& timeline)
      : out_(out), timeline_(timeline), shape_(page_shape_of(out.path())) {}

  void add(const MergeSources& sources, const std::function<void(int, int)>& progress) {
    const int total = static_cast<int>(sources.ranks.size() + sources.parts.size());
    int done = 0;
    for (const int rank : sources.ranks) {
      add_rank_file(fs::path(sources.directory) / rank_database_name(rank), rank, sources.place);
      if (progress) {
        progress(++done, total);
      }
    }
    for (const PartSource& part : sources.parts) {
      add_part(part);
      if (progress) {
        progress(++done, total);
      }
    }
    for (const RanksLeftBehind& ranks : sources.left_behind) {
      merge_part::add_left_behind(left_behind_, ranks.ranks, ranks.place);
    }
  }

  std::vector<RankEntry>& entries() { return entries_; }
  LateRows& late_rows() { return late_rows_; }
  const std::vector<RanksLeftBehind>& left_behind() const { return left_behind_; }

private:
  void add_rank_file(const fs::path& path, int rank, const std::string& place) {
    try {
      if (!fs::exists(path)) {
        throw MergeError("no such file");
      }
      settle_journal(path);
      bool own_pages = true;
      const std::optional<RankPagesToCopy> pages = checked_pages(path, rank, own_pages);
      AttachedSource source(out_, path);
      const ClockMap map = read_rank_clock(out_, "src", rank).map_onto(timeline_.origin_ns);
      out_.exec("BEGIN");
      copy_attached_tables(out_, map);
      LateRows late = pages ? copy_rank_tiles_and_late_rows(out_) : LateRows{};
      materialize_nccl_calls(out_, "src", rank);
      out_.exec("COMMIT");
      late_rows_.append(std::move(late));
      RankEntry& entry = entries_.emplace_back(RankEntry{rank, place, "", 0, {}, {}});
      if (pages) {
        entry.pages_path = pages->path;
        entry.calls = pages->calls;
        entry.extent = pages->extent;
        entry.leaves = pages->leaves;
        entry.own_pages = own_pages;
      }
    } catch (const std::exception& error) {
      std::fprintf(stderr, "commlens: skipping %s: %s\n", path.string().c_str(), error.what());
      merge_part::add_left_behind(left_behind_, {rank}, place);
    }
  }

  // The pages of a rank file with a trace, encoded first where it has none for this timeline and
  // these tile widths (own_pages false then); nullopt for a file without a trace.
  std::optional<RankPagesToCopy> checked_pages(const fs::path& path, int rank, bool& own_pages) {
    const auto valid_pages = [&](std::string& why) -> std::optional<RankPagesToCopy> {
      AttachedSource source(out_, path);
      check_rank_file(out_, path);
      if (attached_has_rows(out_, "mpi_calls") || attached_has_rows(out_, "mpi_requests")) {
        throw MergeError("its trace is stored as rows (an older commlens): merge it with `commlens merge`");
      }
      if (trace_pages::last_chunk(out_, "src") == 0) {
        return RankPagesToCopy{}; // no trace
      }
      const ClockMap map = read_rank_clock(out_, "src", rank).map_onto(timeline_.origin_ns);
      return rank_pages_to_copy(out_, path, map, timeline_.tile_widths, shape_, why);
    };
    std::string why;
    std::optional<RankPagesToCopy> pages = valid_pages(why);
    if (!pages) {
      RankTracePages(path.string(), rank)
          .encode(timeline_.origin_ns, timeline_.tile_widths, RankTracePages::EncodedBy::Merge);
      own_pages = false;
      pages = valid_pages(why);
    }
    if (!pages) {
      throw MergeError("its trace pages do not fit the merge: " + why);
    }
    return pages->path.empty() ? std::nullopt : pages;
  }

  void add_part(const PartSource& part) {
    try {
      const fs::path path(part.path);
      const std::string folder = path.parent_path().string();
      AttachedSource source(out_, path);
      out_.exec("BEGIN");
      copy_attached_tables(out_, ClockMap{}); // a part's rows are on the job's timeline already
      out_.exec("INSERT INTO timeline_tiles SELECT * FROM src.timeline_tiles");
      std::vector<RankEntry> ranks = merge_part::read_ranks(out_, "src", folder);
      LateRows late = read_late_rows(out_, "src", merge_part::kLateRows);
      const std::vector<RanksLeftBehind> left_behind = merge_part::read_left_behind(out_, "src");
      out_.exec("COMMIT");
      std::move(ranks.begin(), ranks.end(), std::back_inserter(entries_));
      late_rows_.append(std::move(late));
      for (const RanksLeftBehind& ranks_left : left_behind) {
        merge_part::add_left_behind(left_behind_, ranks_left.ranks, ranks_left.place);
      }
    } catch (const std::exception& error) {
      std::fprintf(stderr, "commlens: skipping the part %s: %s\n", part.path.c_str(), error.what());
      for (const RanksLeftBehind& ranks : part.ranks) {
        merge_part::add_left_behind(left_behind_, ranks.ranks, ranks.place);
      }
    }
  }

  SqliteDatabase& out_;
  const JobTimeline& timeline_;
  PageShape shape_;
  std::vector<RankEntry> entries_;
  LateRows late_rows_;
  std::vector<RanksLeftBehind> left_behind_;
};

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

} // namespace

PartContents merge_into_part(const MergeSources& sources, const JobTimeline& timeline,
                             const std::string& path, const std::function<void(int, int)>& progress) {
  remove_with_journals(path);
  SqliteDatabase part = open_merged(path);
  create_merged_schema(part);
  create_tile_levels(part, timeline);
  part.exec(merge_part::kCreateTables);
  TreeMergeInput input(part, timeline);
  input.add(sources, progress);
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
  MergedFile output(options, sources.directory);
  MergeResult result;
  result.output_path = output.final_path();
  SqliteDatabase& merged = output.db();
  create_tile_levels(merged, timeline);
  TreeMergeInput input(merged, timeline);
  input.add(sources, options.progress);
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
