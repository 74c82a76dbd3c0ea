// The timeline's level-of-detail tiles (docs/timeline-lod.md) against the calls they summarise: on
// the synthetic 64-rank trace of bench/report_10m (written by the merge's own tile code,
// build_timeline_tiles), and on a crafted lane with the awkward cases (negative times,
// zero-length calls, a call spanning many tiles with another call nested in it).
#include "test_database.hpp"

#include "commlens/analysis/timeline.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "commlens/profiler/timeline_tiles.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>

namespace {

using commlens::analysis::Database;
using commlens::analysis::TimelineLane;
using commlens::analysis::TimelineWindow;

constexpr int kSyntheticCalls = 200'000;

struct LaneTotals {
  std::int64_t calls = 0;
  std::int64_t busy_ns = 0;
  bool operator==(const LaneTotals&) const = default;
  friend std::ostream& operator<<(std::ostream& out, const LaneTotals& totals) {
    return out << totals.calls << " calls, " << totals.busy_ns << " ns busy";
  }
};

std::map<TimelineLane, LaneTotals> calls_per_lane(const Database& database) {
  std::map<TimelineLane, LaneTotals> lanes;
  auto query =
      database.prepare("SELECT rank, thread, count(*), sum(end_ns - start_ns) FROM mpi_calls GROUP BY 1, 2");
  while (query.step())
    lanes[{static_cast<int>(query.integer(0)), query.integer(1)}] = {query.integer(2), query.integer(3)};
  return lanes;
}

std::map<TimelineLane, LaneTotals> tiles_per_lane(const Database& database, int level) {
  std::map<TimelineLane, LaneTotals> lanes;
  auto query = database.prepare(
      "SELECT rank, thread, sum(calls), sum(busy_ns) FROM timeline_tiles WHERE level = ?1 GROUP BY 1, 2");
  query.bind(1, level);
  while (query.step())
    lanes[{static_cast<int>(query.integer(0)), query.integer(1)}] = {query.integer(2), query.integer(3)};
  return lanes;
}

std::vector<std::int64_t> tile_widths(const Database& database) {
  std::vector<std::int64_t> widths;
  auto query = database.prepare("SELECT tile_ns FROM timeline_tile_levels ORDER BY level");
  while (query.step())
    widths.push_back(query.integer(0));
  return widths;
}

LaneTotals totals_of(const TimelineWindow& window) {
  LaneTotals totals{static_cast<std::int64_t>(window.total_calls()), 0};
  for (const auto& bin : window.bins)
    totals.busy_ns += bin.busy_ns;
  for (const auto& call : window.calls)
    totals.busy_ns += call.end_ns - call.start_ns;
  return totals;
}

std::set<std::int64_t> call_ids(const TimelineWindow& window) {
  std::set<std::int64_t> ids;
  for (const auto& call : window.calls)
    ids.insert(call.id);
  return ids;
}

// The calls of `lane` at least `resolution_ns` long: the ones a window draws on their own.
std::set<std::int64_t> wide_call_ids(const Database& database, const TimelineLane& lane,
                                     std::int64_t resolution_ns) {
  auto query = database.prepare(
      "SELECT id FROM mpi_calls WHERE rank = ?1 AND thread = ?2 AND end_ns - start_ns >= ?3");
  query.bind(1, lane.rank).bind(2, lane.thread).bind(3, resolution_ns);
  std::set<std::int64_t> ids;
  while (query.step())
    ids.insert(query.integer(0));
  return ids;
}

// Every level's tiles hold each lane's calls and busy time exactly, levels widen by the factor.
void expect_tiles_sum_to_the_calls(const Database& database) {
  const auto calls = calls_per_lane(database);
  const auto widths = tile_widths(database);
  ASSERT_FALSE(widths.empty());
  for (std::size_t level = 0; level < widths.size(); ++level) {
    SCOPED_TRACE(fmt::format("level {} ({} ns tiles)", level, widths[level]));
    if (level > 0) {
      EXPECT_EQ(widths[level], widths[level - 1] * commlens::kTileWidthFactor);
    }
    const auto tiles = tiles_per_lane(database, static_cast<int>(level));
    EXPECT_EQ(tiles.size(), calls.size());
    for (const auto& [lane, totals] : calls) {
      SCOPED_TRACE(fmt::format("rank {} thread {}", lane.rank, lane.thread));
      EXPECT_EQ(tiles.contains(lane) ? tiles.at(lane) : LaneTotals{}, totals);
    }
  }
}

// The whole trace at each level's resolution (and between two levels): the tiled window has every
// call of every lane, its busy time, and the same calls drawn on their own as the raw path has on
// `without_tiles` (the same file with the tile tables dropped, as an older merge leaves it).
void expect_whole_trace_windows_match_the_calls(const Database& database, const Database& without_tiles) {
  const auto extent = commlens::analysis::query_timeline_extent(database);
  const auto calls = calls_per_lane(database);
  ASSERT_EQ(extent.lanes.size(), calls.size());
  for (const auto width : tile_widths(database)) {
    for (const auto resolution : {width, width * 5 / 2}) {
      SCOPED_TRACE(fmt::format("resolution {} ns", resolution));
      const auto level = commlens::analysis::query_timeline_tile_level(database, resolution);
      ASSERT_TRUE(level.has_value());
      EXPECT_EQ(level->tile_ns, width);
      EXPECT_FALSE(commlens::analysis::query_timeline_tile_level(without_tiles, resolution).has_value());
      for (const auto& lane : extent.lanes) {
        SCOPED_TRACE(fmt::format("rank {} thread {}", lane.rank, lane.thread));
        const auto tiled = commlens::analysis::query_timeline_window(database, lane, extent.start_ns,
                                                                     extent.end_ns + 1, resolution);
        const auto raw = commlens::analysis::query_timeline_window(without_tiles, lane, extent.start_ns,
                                                                   extent.end_ns + 1, resolution);
        EXPECT_EQ(totals_of(tiled), calls.at(lane));
        EXPECT_EQ(totals_of(raw), calls.at(lane));
        EXPECT_EQ(tiled.total_calls(), raw.total_calls());
        EXPECT_EQ(call_ids(tiled), wide_call_ids(database, lane, resolution));
        EXPECT_EQ(call_ids(tiled), call_ids(raw));
        for (const auto& bin : tiled.bins) {
          EXPECT_EQ(bin.start_ns % width, 0);
          EXPECT_GT(bin.calls, 0u);
        }
      }
    }
  }
  const auto finest = tile_widths(database).front();
  EXPECT_FALSE(commlens::analysis::query_timeline_tile_level(database, finest - 1).has_value());
}

std::filesystem::path copy_without_tiles(const std::filesystem::path& path) {
  auto copy = path;
  copy.replace_filename(path.stem().string() + "-without-tiles.sqlite");
  std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
  commlens::SqliteDatabase database(copy.string(), SQLITE_OPEN_READWRITE);
  database.exec("DROP TABLE timeline_tiles; DROP TABLE timeline_tile_levels;");
  return copy;
}

class SyntheticTrace : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    path_ = commlens::test::make_temp_directory("commlens-tiles") / "synthetic.sqlite";
    const auto command = fmt::format("'{}' '{}' '{}' {} > /dev/null 2>&1", COMMLENS_REPORT_10M_PATH,
                                     COMMLENS_CLI_PATH, path_.string(), kSyntheticCalls);
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    without_tiles_ = copy_without_tiles(path_);
  }
  static inline std::filesystem::path path_, without_tiles_;
};

TEST_F(SyntheticTrace, TilesSumToEveryLanesCallsAndBusyTimeAtEveryLevel) {
  const Database database(path_);
  EXPECT_EQ(calls_per_lane(database).size(), 66u); // 64 ranks, two of them with a second thread
  expect_tiles_sum_to_the_calls(database);
  EXPECT_GE(tile_widths(database).size(), 3u);
}

TEST_F(SyntheticTrace, WholeTraceFromTilesHasTheSameCallsAsFromTheCalls) {
  expect_whole_trace_windows_match_the_calls(Database(path_), Database(without_tiles_));
}

TEST_F(SyntheticTrace, FinestLevelHoldsAtLeastTheMinimumMeanCallsPerTile) {
  const Database database(path_);
  auto query = database.prepare("SELECT sum(calls) * 1.0 / count(*) FROM timeline_tiles WHERE level = 0");
  ASSERT_TRUE(query.step());
  EXPECT_GE(query.real(0),
            static_cast<double>(commlens::kMinMeanCallsPerFinestTile) / commlens::kTileWidthFactor);
}

// One lane, times in ns: a call from before time 0, zero-length calls, a 40 us call over many
// tiles with a call nested in it (an MPI call made from inside another), then a short burst.
TEST(CraftedTiles, AwkwardCallsAreCountedOnceAndTheirTimeSplitExactly) {
  const auto path = commlens::test::make_temp_directory("commlens-tiles") / "crafted.sqlite";
  {
    commlens::test::TestDatabase database(path);
    database.execute("INSERT INTO run VALUES ('mode', 'trace'), ('world_size', '1');"
                     "INSERT INTO functions (id, name, family) VALUES (1, 'MPI_Send', 'p2p'), "
                     "(2, 'MPI_Wait', 'completion'), (3, 'MPI_Allreduce', 'collective');"
                     "INSERT INTO ranks (rank, host, pid, init_ns, finalize_ns, threads, finalized) VALUES "
                     "(0, 'node', 1, 0, 100000, 1, 1)");
    std::string rows =
        "INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, "
        "bytes_recv, peer) VALUES (1, 0, 0, 1, -50, 30, 0, 0, -1), (2, 0, 0, 1, 100, 100, 0, 0, -1),"
        "(3, 0, 0, 2, 200, 40200, 0, 0, -1), (4, 0, 0, 3, 300, 400, 0, 0, -1),"
        "(5, 0, 0, 1, 40200, 40200, 0, 0, -1)";
    for (int i = 0; i < 40; ++i)
      rows +=
          fmt::format(", ({}, 0, 0, {}, {}, {}, 0, 0, -1)", 6 + i, 1 + i % 3, 41000 + 70 * i, 41030 + 70 * i);
    database.execute(rows);
    database.close();
    commlens::SqliteDatabase merged(path.string(), SQLITE_OPEN_READWRITE);
    EXPECT_GE(commlens::build_timeline_tiles(merged).levels, 2);
  }
  const Database database(path);
  expect_tiles_sum_to_the_calls(database);
  expect_whole_trace_windows_match_the_calls(database, Database(copy_without_tiles(path)));
}

} // namespace
