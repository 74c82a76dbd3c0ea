#include "tree_merge_input.hpp"

#include "commlens/profiler/nccl_call_chunk.hpp"
#include "commlens/profiler/trace_pages.hpp"
#include "merge_plan.hpp"
#include "merged_output.hpp"
#include "trace_pages_format.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>

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

} // namespace

TreeMergeInput::TreeMergeInput(SqliteDatabase& out, const JobTimeline& timeline)
    : out_(out), timeline_(timeline), shape_(page_shape_of(out.path())) {}

void TreeMergeInput::adopt_output_part() {
  entries_ = merge_part::read_ranks(out_, "main", fs::path(out_.path()).parent_path().string());
  late_rows_ = read_late_rows(out_, "main", merge_part::kLateRows);
  left_behind_ = merge_part::read_left_behind(out_, "main");
  out_.exec("DELETE FROM merge_part_ranks; DELETE FROM merge_part_late_calls; "
            "DELETE FROM merge_part_late_requests; DELETE FROM merge_part_left_behind;");
  for (const RankEntry& entry : entries_) {
    comes_first(entry.rank);
  }
}

void TreeMergeInput::add(const MergeSources& sources, const std::function<void(int, int)>& progress,
                         std::size_t skipped_part) {
  const int total = static_cast<int>(sources.ranks.size() + sources.parts.size());
  int done = 0;
  for (const int rank : sources.ranks) {
    add_rank_file(fs::path(sources.directory) / rank_database_name(rank), rank, sources.place);
    if (progress) {
      progress(++done, total);
    }
  }
  for (std::size_t part = 0; part < sources.parts.size(); ++part) {
    if (part != skipped_part) {
      add_part(sources.parts[part]);
    }
    if (progress) {
      progress(++done, total);
    }
  }
  for (const RanksLeftBehind& ranks : sources.left_behind) {
    merge_part::add_left_behind(left_behind_, ranks.ranks, ranks.place);
  }
}

bool TreeMergeInput::comes_first(int rank) {
  const bool first = !lowest_rank_ || rank < *lowest_rank_;
  lowest_rank_ = first ? rank : *lowest_rank_;
  return first;
}

void TreeMergeInput::add_rank_file(const fs::path& path, int rank, const std::string& place) {
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
    copy_attached_tables(out_, map, comes_first(rank));
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
std::optional<RankPagesToCopy> TreeMergeInput::checked_pages(const fs::path& path, int rank,
                                                             bool& own_pages) {
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

void TreeMergeInput::add_part(const PartSource& part) {
  try {
    const fs::path path(part.path);
    const std::string folder = path.parent_path().string();
    AttachedSource source(out_, path);
    const int lowest = static_cast<int>(
        out_.query_int64("SELECT coalesce(min(rank), 2147483647) FROM src.merge_part_ranks"));
    out_.exec("BEGIN");
    // A part's rows are on the job's timeline already.
    copy_attached_tables(out_, ClockMap{}, comes_first(lowest));
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

} // namespace commlens
