#include "merge_plan.hpp"

#include "commlens/profiler/merge_error.hpp"
#include "commlens/profiler/schema.hpp"
#include "commlens/profiler/timeline_tiles.hpp"
#include "trace_pages_merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <regex>

namespace commlens {

namespace fs = std::filesystem;

// A rank killed before it closed its file leaves its journal beside it, holding the pages of a
// flush it did not finish (files of older versions: a WAL, which a read-only attach would leave
// with -wal and -shm files). Opening it for writing and reading it rolls that flush back (or
// checkpoints the WAL); the journal, then empty, is removed. A file this process may not write is
// read as it is.
void settle_journal(const std::filesystem::path& path) {
  try {
    SqliteDatabase file(path.string(), SQLITE_OPEN_READWRITE);
    file.query_int64("SELECT count(*) FROM sqlite_master");
    file.exec("PRAGMA journal_mode=DELETE");
    file.close();
    std::filesystem::remove(path.string() + "-journal");
  } catch (const SqliteError&) {
  } catch (const std::filesystem::filesystem_error&) {
  }
}

void check_rank_file(SqliteDatabase& merged, const std::filesystem::path& path) {
  const auto application_id = merged.query_int64("PRAGMA src.application_id");
  const auto version = merged.query_int64("PRAGMA src.user_version");
  if (application_id != schema::kApplicationId) {
    throw MergeError(fmt::format("{}: not a commlens rank file", path.string()));
  }
  if (version > schema::kVersion) {
    throw MergeError(fmt::format("{}: schema version {} is newer than this commlens ({})", path.string(),
                                 version, schema::kVersion));
  }
}

std::vector<RankFile> find_rank_files(const fs::path& directory) {
  std::error_code error;
  if (!fs::is_directory(directory, error)) {
    throw MergeError(fmt::format("{}: not a directory", directory.string()));
  }
  static const std::regex pattern(R"(rank-(\d+)\.sqlite)");
  std::vector<RankFile> files;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, match, pattern)) {
      files.push_back(RankFile{std::stoi(match[1].str()), entry.path().string()});
    }
  }
  if (files.empty()) {
    throw MergeError(fmt::format("{}: no rank files (rank-NNNNN.sqlite) to merge", directory.string()));
  }
  std::sort(files.begin(), files.end(), [](const RankFile& a, const RankFile& b) { return a.rank < b.rank; });
  return files;
}

std::vector<RankFile> find_rank_files(const std::vector<std::string>& directories) {
  std::vector<RankFile> files;
  for (const std::string& directory : directories) {
    const std::vector<RankFile> found = find_rank_files(fs::path(directory));
    files.insert(files.end(), found.begin(), found.end());
  }
  std::sort(files.begin(), files.end(), [](const RankFile& a, const RankFile& b) { return a.rank < b.rank; });
  const auto twice = std::adjacent_find(
      files.begin(), files.end(), [](const RankFile& a, const RankFile& b) { return a.rank == b.rank; });
  if (twice != files.end()) {
    throw MergeError(fmt::format("rank {} has a file in two folders: {} and {}", twice->rank, twice->path,
                                 std::next(twice)->path));
  }
  return files;
}

RankClock read_rank_clock(const SqliteDatabase& db, const std::string& schema, int rank) {
  auto query = db.prepare(
      fmt::format("SELECT init_ns, clock_offset_ns, clock_drift_ppb FROM {}.ranks WHERE rank = ?", schema));
  query.bind(1, std::int64_t{rank});
  if (!query.step()) {
    throw MergeError(fmt::format("rank {}: its file has no ranks row", rank));
  }
  return RankClock{query.column_int64(0), query.column_int64(1), query.column_double(2)};
}

bool attached_has_rows(SqliteDatabase& merged, const char* table) {
  return merged.query_int64(fmt::format("SELECT count(*) FROM src.sqlite_master WHERE name = '{}'", table)) !=
             0 &&
         merged.query_int64(fmt::format("SELECT EXISTS (SELECT 1 FROM src.{})", table)) != 0;
}

void attach_rank_file(SqliteDatabase& merged, const std::filesystem::path& path) {
  merged.prepare("ATTACH DATABASE ? AS src").bind(1, "file:" + path.string() + "?mode=ro").run();
}

MergePlan plan_merge(SqliteDatabase& merged, const std::vector<RankFile>& files, bool use_rank_pages) {
  MergePlan plan;
  std::int64_t calls = 0;
  // Timeline origin: rank 0's MPI_Init on rank 0's clock (offsets are relative to rank 0).
  std::optional<std::int64_t> origin;
  for (const RankFile& file : files) {
    settle_journal(file.path);
    try {
      attach_rank_file(merged, file.path);
    } catch (const SqliteError& error) {
      std::fprintf(stderr, "commlens: skipping %s: %s\n", file.path.c_str(), error.what());
      plan.unreadable_ranks.push_back(file.rank);
      continue;
    }
    try {
      check_rank_file(merged, file.path);
      const RankClock clock = read_rank_clock(merged, "src", file.rank);
      origin = origin.value_or(clock.origin_ns());
      const ClockMap map = clock.map_onto(*origin);
      const std::optional<TraceMaterializer::Extent> recorded =
          use_rank_pages ? recorded_extent(merged, map) : std::nullopt;
      const auto extent = recorded ? *recorded : TraceMaterializer(merged, "src", file.rank, map).extent();
      calls += extent.calls_at_most;
      if (extent.span) {
        plan.rank_spans.add(*extent.span);
      }
      plan.has_row_tables |=
          attached_has_rows(merged, "mpi_calls") || attached_has_rows(merged, "mpi_requests");
      plan.ranks.push_back(PlannedRank{file, map});
    } catch (const SqliteError& error) {
      std::fprintf(stderr, "commlens: skipping %s: %s\n", file.path.c_str(), error.what());
      plan.unreadable_ranks.push_back(file.rank);
    } catch (const MergeError& error) {
      std::fprintf(stderr, "commlens: skipping %s\n", error.what());
      plan.unreadable_ranks.push_back(file.rank);
    }
    merged.exec("DETACH DATABASE src");
  }
  plan.tile_widths = choose_tile_widths(calls, plan.rank_spans);
  return plan;
}

} // namespace commlens
