#include "commlens/profiler/merge.hpp"

#include "commlens/profiler/job_registry.hpp"
#include "commlens/profiler/nccl_call_chunk.hpp"
#include "commlens/profiler/schema.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "commlens/profiler/timeline_tiles.hpp"
#include "merge_plan.hpp"
#include "merged_output.hpp"
#include "sqlite_bulk_table.hpp"
#include "trace_materializer.hpp"
#include "trace_pages_merge.hpp"
#include "trace_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

namespace commlens {

namespace fs = std::filesystem;

namespace {

// Copies one attached rank file ("src") into the merged database, on rank 0's timeline; its calls
// go to `tiles` too, and its trace rows through `bulk` when not null: as the pages the rank
// encoded at MPI_Finalize where `pages_allowed` and they are still valid, else from its chunks.
struct CopiedRank {
  std::optional<std::uint64_t> calls; // decoded from chunks or encoded by the rank; nullopt:
                                      // the file had call rows of its own, which `tiles` did not see
  LateRows late_rows;                 // for INSERTs once `bulk` has written its pages
  bool from_rank_pages = false;
};
CopiedRank copy_rank(SqliteDatabase& merged, const PlannedRank& rank, const MergePlan& plan,
                     TimelineTileBuilder& tiles, SqliteBulkLoader* bulk, bool pages_allowed) {
  const bool call_rows = attached_has_rows(merged, "mpi_calls");
  copy_attached_tables(merged, rank.map);
  std::string why;
  const std::optional<RankPagesToCopy> pages =
      bulk != nullptr && pages_allowed
          ? rank_pages_to_copy(merged, rank.file.path, rank.map, plan.tile_widths, bulk->shape(), why)
          : std::nullopt;
  CopiedRank copied;
  if (pages) {
    bulk->append_leaves(pages->path, pages->leaves);
    copied = CopiedRank{pages->calls, copy_rank_tiles_and_late_rows(merged), true};
  } else { // the rank's trace, stored as compact chunks, becomes rows here
    if (!why.empty()) {
      std::fprintf(stderr, "commlens: rank %d: its trace pages are not copied (%s); decoding its chunks\n",
                   rank.file.rank, why.c_str());
    }
    TraceRowWriter rows(merged, bulk, &tiles);
    TraceMaterializer(merged, "src", rank.file.rank, rank.map).run(rows);
    rows.flush();
    copied = CopiedRank{call_rows ? std::nullopt : std::optional(rows.calls()), rows.take_late_rows()};
  }
  materialize_nccl_calls(merged, "src", rank.file.rank);
  return copied;
}

// The trace rows' loader: pages written straight into the file where the file allows it, unless
// a rank file brings rows of its own (those are copied by INSERTs into the same tables).
std::unique_ptr<SqliteBulkLoader> open_bulk_loader(const SqliteDatabase& merged, const MergePlan& plan) {
  std::string why;
  return plan.has_row_tables ? nullptr : SqliteBulkLoader::open(merged, trace_row_tables(), why);
}

std::vector<std::string> merged_directories(const MergeOptions& options) {
  std::vector<std::string> directories{options.directory};
  directories.insert(directories.end(), options.more_directories.begin(), options.more_directories.end());
  return directories;
}

MergeResult merge_once(const MergeOptions& options, bool bulk_allowed) {
  const bool pages_allowed = options.use_rank_pages;
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  const std::vector<std::string> directories = merged_directories(options);
  const std::vector<RankFile> files = find_rank_files(directories);
  MergedFile output(options, options.directory);
  MergeResult result;
  result.output_path = output.final_path();
  SqliteDatabase& merged = output.db();

  const auto plan_began = Clock::now();
  const MergePlan plan = plan_merge(merged, files, pages_allowed);
  result.missing_ranks = plan.unreadable_ranks;
  result.plan_seconds = seconds_since(plan_began);

  const auto rows_began = Clock::now();
  const std::unique_ptr<SqliteBulkLoader> bulk = bulk_allowed ? open_bulk_loader(merged, plan) : nullptr;
  // Its statements end before the connection closes for the bulk loader.
  std::optional<TimelineTileBuilder> tiles(std::in_place, merged, plan.tile_widths);
  bool call_rows_copied = false;
  std::uint64_t calls_written = 0; // of the ranks committed
  LateRows late_rows;
  int done = static_cast<int>(plan.unreadable_ranks.size());
  for (const PlannedRank& rank : plan.ranks) {
    const RankFile& file = rank.file;
    bool attached = false;
    const std::optional<SqliteBulkLoader::Mark> rows_before =
        bulk ? std::optional(bulk->mark()) : std::nullopt;
    try {
      attach_rank_file(merged, file.path);
      attached = true;
      merged.exec("BEGIN");
      CopiedRank copied = copy_rank(merged, rank, plan, *tiles, bulk.get(), pages_allowed);
      merged.exec("COMMIT");
      call_rows_copied |= !copied.calls;
      calls_written += copied.calls.value_or(0);
      if (copied.from_rank_pages) {
        result.trace_pages_ranks.push_back(file.rank);
      }
      late_rows.append(std::move(copied.late_rows));
      result.merged_ranks.push_back(file.rank);
    } catch (const SqliteError& error) {
      if (sqlite3_get_autocommit(merged.get()) == 0) {
        merged.exec("ROLLBACK");
      }
      tiles->discard();
      if (bulk) {
        bulk->rollback(*rows_before);
      }
      std::fprintf(stderr, "commlens: skipping %s: %s\n", file.path.c_str(), error.what());
      result.missing_ranks.push_back(file.rank);
    }
    if (attached) {
      merged.exec("DETACH DATABASE src");
    }
    if (options.progress) {
      options.progress(++done, static_cast<int>(files.size()));
    }
  }
  if (result.merged_ranks.empty()) {
    throw MergeError(
        fmt::format("{}: none of the {} rank files could be read", options.directory, files.size()));
  }
  tiles.reset();
  if (bulk) {
    output.install(*bulk, late_rows);
    result.rows_as_pages = true;
  }
  result.calls = call_rows_copied
                     ? static_cast<std::uint64_t>(merged.query_int64("SELECT count(*) FROM mpi_call_rows"))
                     : calls_written;
  // The widths came from a bound on the calls: when the calls written give other widths, or when
  // the tiles did not see every call (rows a rank file carried), they are built from the merged calls.
  if (call_rows_copied ||
      choose_tile_widths(static_cast<std::int64_t>(result.calls), plan.rank_spans) != plan.tile_widths) {
    build_timeline_tiles(merged);
  }
  result.rows_seconds = seconds_since(rows_began);

  record_run_values(merged, directories, result);
  output.finish();
  if (options.remove_rank_files && result.missing_ranks.empty()) {
    for (const RankFile& file : files) {
      remove_rank_file(file.path);
    }
    // Every job's files are in the merged database: nothing is left for the registries to place.
    for (const std::string& directory : directories) {
      std::error_code ignored;
      std::filesystem::remove(std::filesystem::path(directory) / kJobRegistryName, ignored);
    }
    result.rank_files_removed = true;
  }
  return result;
}

} // namespace

MergeResult merge_rank_databases(const MergeOptions& options) {
  try {
    return merge_once(options, options.write_pages);
  } catch (const BulkOrderError&) {
    // Rows out of rowid order (no writer makes them): the pages cannot be written in order, so the
    // merge starts again with INSERTs, which take rows in any order.
    return merge_once(options, false);
  }
}

std::string describe_losses(const MergeResult& result) {
  std::vector<std::string> parts;
  if (!result.missing_ranks.empty()) {
    parts.push_back(fmt::format("{} of {} ranks missing", result.missing_ranks.size(), result.world_size));
  }
  if (result.dropped_events != 0) {
    parts.push_back(fmt::format("{} trace events dropped", result.dropped_events));
  }
  if (result.summary_overflow != 0) {
    parts.push_back(fmt::format("{} calls not counted (summary table full)", result.summary_overflow));
  }
  std::string text;
  for (const std::string& part : parts) {
    text += (text.empty() ? "" : ", ") + part;
  }
  return text.empty() ? text : "data lost: " + text;
}

std::string describe_ranks(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string text;
  for (std::size_t first = 0; first < ranks.size();) {
    std::size_t last = first;
    while (last + 1 < ranks.size() && ranks[last + 1] == ranks[last] + 1) {
      ++last;
    }
    text += (text.empty() ? "" : ",") + std::to_string(ranks[first]);
    if (last > first) {
      text += "-" + std::to_string(ranks[last]);
    }
    first = last + 1;
  }
  return text;
}

} // namespace commlens
