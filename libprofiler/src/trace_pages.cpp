#include "commlens/profiler/trace_pages.hpp"

#include "commlens/profiler/sqlite.hpp"
#include "merge_plan.hpp"
#include "sqlite_bulk_table.hpp"
#include "trace_materializer.hpp"
#include "trace_pages_format.hpp"
#include "trace_rows.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace commlens {

namespace {

std::int64_t thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

} // namespace

std::int64_t rank_clock_origin_ns(const std::string& rank_file, int rank) {
  const SqliteDatabase db(rank_file, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
  return read_rank_clock(db, "main", rank).origin_ns();
}

RankTracePages::RankTracePages(const std::string& rank_file, int rank)
    : path_(rank_file), rank_(rank),
      db_(std::make_unique<SqliteDatabase>(rank_file, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX)) {
  // As the rank's writer had it (rank_store.cpp): a killed process loses nothing committed.
  db_->exec("PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY;");
}

RankTracePages::~RankTracePages() = default;

std::int64_t RankTracePages::clock_origin_ns() const {
  return read_rank_clock(*db_, "main", rank_).origin_ns();
}

RankTracePages::Extent RankTracePages::extent(std::int64_t origin_ns) {
  if (!extent_ || extent_->first != origin_ns) {
    const auto began = std::chrono::steady_clock::now();
    const std::int64_t began_cpu = thread_cpu_ns();
    const ClockMap map = read_rank_clock(*db_, "main", rank_).map_onto(origin_ns);
    extent_.emplace(origin_ns, TraceMaterializer(*db_, "main", rank_, map).extent());
    extent_cost_.wall_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began)
            .count();
    extent_cost_.cpu_ns += thread_cpu_ns() - began_cpu;
  }
  return extent_->second;
}

RankTracePages::Report RankTracePages::encode(std::int64_t origin_ns,
                                              const std::vector<std::int64_t>& tile_widths, EncodedBy by) {
  using Clock = std::chrono::steady_clock;
  const auto began = Clock::now();
  const std::int64_t began_cpu = thread_cpu_ns();
  const std::string pages_path = trace_pages_path(path_);
  std::remove(pages_path.c_str());
  trace_pages::Record record;
  record.map = read_rank_clock(*db_, "main", rank_).map_onto(origin_ns);
  record.extent = extent(origin_ns);
  db_->exec("BEGIN");
  try {
    std::string why;
    const std::unique_ptr<SqliteBulkLoader> bulk = SqliteBulkLoader::open(*db_, trace_row_tables(), why);
    if (!bulk) {
      throw SqliteError(path_ + ": its trace rows cannot be written as pages: " + why);
    }
    LateRows late_rows;
    { // the tiles' statements end before the commit
      TimelineTileBuilder tiles(*db_, tile_widths);
      TraceRowWriter rows(*db_, bulk.get(), &tiles);
      TraceMaterializer(*db_, "main", rank_, record.map).run(rows);
      rows.flush();
      record.calls = rows.calls();
      late_rows = rows.take_late_rows();
    }
    record.page_size = static_cast<std::int64_t>(bulk->page_size());
    record.usable_size = static_cast<std::int64_t>(bulk->usable_size());
    record.last_chunk = trace_pages::last_chunk(*db_, "main");
    record.leaves = bulk->save(pages_path);
    record.page_check = trace_pages::page_check(pages_path, record.leaves.pages, bulk->page_size());
    db_->exec(trace_pages::kCreateTables);
    trace_pages::write_record(*db_, record);
    store_late_rows(*db_, trace_pages::kLateRows, late_rows);
    const std::int64_t wall_ns =
        extent_cost_.wall_ns +
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - began).count();
    if (by == EncodedBy::Rank) {
      auto overhead =
          db_->prepare("INSERT OR REPLACE INTO profiler_overhead VALUES (?, 'trace_pages', ?, ?, ?)");
      overhead.bind(1, std::int64_t{rank_}).bind(2, static_cast<std::int64_t>(record.calls));
      overhead.bind(3, wall_ns).bind(4, extent_cost_.cpu_ns + thread_cpu_ns() - began_cpu).run();
    }
    db_->exec("COMMIT");
  } catch (...) {
    if (sqlite3_get_autocommit(db_->get()) == 0) {
      db_->exec("ROLLBACK");
    }
    std::remove(pages_path.c_str());
    throw;
  }
  return Report{record.calls, record.leaves.pages,
                static_cast<double>(extent_cost_.wall_ns) / 1e9 +
                    std::chrono::duration<double>(Clock::now() - began).count()};
}

void TraceExtentTotals::add(const TraceExtent& extent) {
  calls_at_most += extent.calls_at_most;
  if (extent.span) {
    spans.add(*extent.span);
  }
}

std::vector<RankTracePages::Report> encode_trace_pages_in(const std::string& directory) {
  // One rank file open at a time: a folder of thousands of them would run out of descriptors.
  const std::vector<RankFile> files = find_rank_files(directory);
  const std::int64_t origin = RankTracePages(files.front().path, files.front().rank).clock_origin_ns();
  TraceExtentTotals extents;
  for (const RankFile& file : files) {
    extents.add(RankTracePages(file.path, file.rank).extent(origin));
  }
  const std::vector<std::int64_t> widths = extents.tile_widths();
  std::vector<RankTracePages::Report> reports;
  for (const RankFile& file : files) {
    reports.push_back(RankTracePages(file.path, file.rank).encode(origin, widths));
  }
  return reports;
}

} // namespace commlens
