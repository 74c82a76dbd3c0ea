#include "merge_plan.hpp"

#include "commlens/profiler/merge.hpp"
#include "commlens/profiler/schema.hpp"
#include "commlens/profiler/timeline_tiles.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace commlens {
namespace {

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

struct RankClock {
  std::int64_t init_ns = 0;
  std::int64_t offset_ns = 0;
  double drift_ppb = 0.0;
};

RankClock read_rank_clock(SqliteDatabase& merged, int rank) {
  auto query =
      merged.prepare("SELECT init_ns, clock_offset_ns, clock_drift_ppb FROM src.ranks WHERE rank = ?");
  query.bind(1, std::int64_t{rank});
  if (!query.step()) {
    throw MergeError(fmt::format("rank {}: its file has no ranks row", rank));
  }
  return RankClock{query.column_int64(0), query.column_int64(1), query.column_double(2)};
}

} // namespace

bool attached_has_rows(SqliteDatabase& merged, const char* table) {
  return merged.query_int64(fmt::format("SELECT count(*) FROM src.sqlite_master WHERE name = '{}'", table)) !=
             0 &&
         merged.query_int64(fmt::format("SELECT EXISTS (SELECT 1 FROM src.{})", table)) != 0;
}

void attach_rank_file(SqliteDatabase& merged, const std::filesystem::path& path) {
  merged.prepare("ATTACH DATABASE ? AS src").bind(1, "file:" + path.string() + "?mode=ro").run();
}

MergePlan plan_merge(SqliteDatabase& merged, const std::vector<RankFile>& files) {
  MergePlan plan;
  std::int64_t calls = 0;
  // Timeline origin: rank 0's MPI_Init on rank 0's clock (offsets are relative to rank 0).
  std::optional<std::int64_t> origin;
  for (const RankFile& file : files) {
    settle_journal(file.path);
    try {
      attach_rank_file(merged, file.path);
    } catch (const SqliteError& error) {
      std::fprintf(stderr, "commlens: skipping %s: %s\n", file.path.string().c_str(), error.what());
      plan.unreadable_ranks.push_back(file.rank);
      continue;
    }
    try {
      check_rank_file(merged, file.path);
      const RankClock clock = read_rank_clock(merged, file.rank);
      if (!origin) {
        origin = clock.init_ns - clock.offset_ns;
      }
      const ClockMap map{clock.init_ns - clock.offset_ns - *origin, clock.drift_ppb * 1e-9};
      const auto extent = TraceMaterializer(merged, "src", file.rank, map).extent();
      calls += extent.calls_at_most;
      if (extent.span) {
        plan.rank_spans.push_back(*extent.span);
      }
      plan.has_row_tables |=
          attached_has_rows(merged, "mpi_calls") || attached_has_rows(merged, "mpi_requests");
      plan.ranks.push_back(PlannedRank{file, map});
    } catch (const SqliteError& error) {
      std::fprintf(stderr, "commlens: skipping %s: %s\n", file.path.string().c_str(), error.what());
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
