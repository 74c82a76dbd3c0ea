#pragma once
// The sources of one step of a job's merge tree (merge_parts.hpp) merged into the file being
// written: rank files (their pages checked, encoded first where missing) and parts, their tables
// and tiles copied, their ranks collected into the per-rank index with where their leaves are.
#include "commlens/profiler/merge_sources.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "merge_part_index.hpp"
#include "sqlite_bulk_table.hpp"
#include "trace_pages_merge.hpp"
#include "trace_rows.hpp"

#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace commlens {

class TreeMergeInput {
public:
  TreeMergeInput(SqliteDatabase& out, const JobTimeline& timeline);

  // The file being written began as a part's (the largest source, renamed): its ranks join the
  // index and its part tables are emptied for the index this step writes.
  void adopt_output_part();
  // Every source but the part `skipped_part` (the adopted one; none when past the end).
  void add(const MergeSources& sources, const std::function<void(int, int)>& progress,
           std::size_t skipped_part = std::numeric_limits<std::size_t>::max());

  std::vector<merge_part::RankEntry>& entries() { return entries_; }
  LateRows& late_rows() { return late_rows_; }
  const std::vector<RanksLeftBehind>& left_behind() const { return left_behind_; }

private:
  void add_rank_file(const std::filesystem::path& path, int rank, const std::string& place);
  std::optional<RankPagesToCopy> checked_pages(const std::filesystem::path& path, int rank, bool& own_pages);
  void add_part(const PartSource& part);
  // Whether a source whose lowest rank is `rank` comes before every rank merged so far: its copy
  // of the tables the first rank's copy of wins (the run values, the catalogues) replaces theirs.
  bool comes_first(int rank);

  SqliteDatabase& out_;
  const JobTimeline& timeline_;
  PageShape shape_;
  std::vector<merge_part::RankEntry> entries_;
  LateRows late_rows_;
  std::vector<RanksLeftBehind> left_behind_;
  std::optional<int> lowest_rank_;
};

} // namespace commlens
