#include "merge_plan.hpp"

#include "commlens/profiler/merge.hpp"
#include "commlens/profiler/schema.hpp"
#include "commlens/profiler/timeline_tiles.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <optional>

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

// Counts a rank's calls and finds its span as call_lanes::rank_span finds it in the merged file:
// the earliest first call of its lanes, and the end of the lane-last call that starts last. The
// materializer hands over the calls lane by lane, in id order.
class RankExtent final : public TraceRowSink {
public:
  void add_call(const CallRow& row) override {
    ++calls_;
    if (!lane_ || lane_->thread != row.thread) {
      close_lane();
      lane_ = Lane{row.thread, row.start_ns, row.start_ns, row.end_ns};
      return;
    }
    lane_->last_start_ns = row.start_ns;
    lane_->last_end_ns = row.end_ns;
  }
  void add_request(const RequestRow&) override {}

  std::int64_t calls() const { return calls_; }
  std::optional<TileSpan> span() {
    close_lane();
    return span_;
  }

private:
  struct Lane {
    int thread;
    std::int64_t first_start_ns, last_start_ns, last_end_ns;
  };
  void close_lane() {
    if (!lane_) {
      return;
    }
    if (!span_) {
      span_ = TileSpan{lane_->first_start_ns, lane_->last_end_ns};
      last_start_ns_ = lane_->last_start_ns;
    } else {
      span_->start_ns = std::min(span_->start_ns, lane_->first_start_ns);
      if (lane_->last_start_ns > last_start_ns_) {
        last_start_ns_ = lane_->last_start_ns;
        span_->end_ns = lane_->last_end_ns;
      }
    }
    lane_.reset();
  }

  std::int64_t calls_ = 0;
  std::optional<Lane> lane_;
  std::optional<TileSpan> span_;
  std::int64_t last_start_ns_ = 0;
};

} // namespace

void attach_rank_file(SqliteDatabase& merged, const std::filesystem::path& path) {
  merged.prepare("ATTACH DATABASE ? AS src").bind(1, "file:" + path.string() + "?mode=ro").run();
}

MergePlan plan_merge(SqliteDatabase& merged, const std::vector<RankFile>& files) {
  MergePlan plan;
  std::int64_t calls = 0;
  std::vector<TileSpan> spans;
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
      RankExtent extent;
      TraceMaterializer(merged, "src", file.rank, map).run(extent);
      calls += extent.calls();
      if (const auto span = extent.span()) {
        spans.push_back(*span);
      }
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
  plan.tile_widths = choose_tile_widths(calls, spans);
  return plan;
}

} // namespace commlens
