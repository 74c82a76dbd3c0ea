// Generates a merged trace database with N synthetic mpi_calls rows (default 10 million) shaped
// like a halo-exchange + allreduce code on 64 ranks, two of them with a second calling thread,
// with the matching call_stats, mpi_requests and the timeline tiles (build_timeline_tiles, the
// merge's own tile code, timed); then times
// `commlens report` on it. Usage: report_10m COMMLENS DB [CALLS]. REPORT_10M_REUSE=1 reuses DB;
// REPORT_10M_BASELINE=PATH also times another commlens binary (the tree before a change) on the same
// file right after and prints the ratio; REPORT_10M_NVTX=1 then adds user NVTX ranges and times the
// NVTX phase section and filter too (slow at 10 M calls: docs/performance.md).
#include "commlens/profiler/schema.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "commlens/profiler/timeline_tiles.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <bit>
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <tuple>

namespace {

constexpr int kRanks = 64;

void execute(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    fmt::print(stderr, "report_10m: SQL failed: {}\n", error ? error : "?");
    std::exit(2);
  }
}

struct Stats {
  long long count = 0, sent = 0, recv = 0, total = 0, min = INT64_MAX, max = 0;
};

void generate(const std::string& path, long long calls) {
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  execute(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;");
  execute(db, std::string(commlens::schema::kCreateTables));
  execute(db, fmt::format("PRAGMA application_id = {}; PRAGMA user_version = {};",
                          commlens::schema::kApplicationId, commlens::schema::kVersion));
  execute(db, "BEGIN");
  execute(
      db,
      "INSERT INTO run VALUES ('mode', 'trace'), ('world_size', '64');"
      "INSERT INTO functions (id, name, family) VALUES (1, 'MPI_Isend', 'p2p'), (2, 'MPI_Irecv', 'p2p'),"
      "(3, 'MPI_Waitall', 'completion'), (4, 'MPI_Allreduce', 'collective'), (5, 'MPI_Bcast', 'collective');"
      "INSERT INTO communicators (id, rank, local_rank, size, is_inter, members, name) VALUES "
      "(0, 0, 0, 64, 0, '0..63', 'MPI_COMM_WORLD')");
  const long long per_rank = calls / kRanks;
  for (int rank = 0; rank < kRanks; ++rank)
    execute(db, fmt::format(
                    "INSERT INTO ranks (rank, host, pid, init_ns, finalize_ns, threads, finalized) VALUES "
                    "({}, 'node-{}', {}, 0, {}, {}, 1); INSERT INTO phases VALUES ({}, 0, 0, NULL, NULL)",
                    rank, rank / 16, 1000 + rank, per_rank * 2000, rank < 2 ? 2 : 1, rank));

  sqlite3_stmt* call = nullptr;
  sqlite3_prepare_v2(
      db,
      "INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, bytes_recv, "
      "peer, tag, comm_id, request_id, phase) VALUES (?,?,?,?,?,?,?,?,?,?,0,?,0)",
      -1, &call, nullptr);
  sqlite3_stmt* request = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO mpi_requests VALUES (?,?,?,?,?,?,?,?,?,0)", -1, &request, nullptr);
  std::mt19937_64 random(42);
  std::lognormal_distribution<double> duration(7.0, 1.0); // median ~1.1 us, long tail
  std::map<std::tuple<int, int, int, int>, Stats> stats;  // rank, function, size bin, peer
  for (int rank = 0; rank < kRanks; ++rank) {
    long long now = 0;
    for (long long i = 0; i < per_rank; ++i) {
      // A step: Isend + Irecv to each of 2 neighbours, Waitall, and every 8th step an Allreduce.
      const int slot = static_cast<int>(i % 6);
      const int function = slot < 2 ? 1 : slot < 4 ? 2 : slot == 4 ? 3 : (i % 48 == 5 ? 4 : 5);
      const int peer =
          function <= 2 ? (slot % 2 == 0 ? (rank + 1) % kRanks : (rank + kRanks - 1) % kRanks) : -1;
      const long long bytes = function <= 2 ? 8LL << (i % 11) : function >= 4 ? 64 : 0;
      const long long sent = function == 1 || function >= 4 ? bytes : 0,
                      recv = function == 2 || function >= 4 ? bytes : 0;
      const long long time = static_cast<long long>(duration(random)) * (function == 4 ? 20 : 1);
      const int thread = rank < 2 && i % 5 == 0 ? 1 : 0;
      const long long id = (static_cast<long long>(rank) << 46) | (static_cast<long long>(thread) << 36) | i;
      const long long values[] = {id, rank, thread, function, now, now + time, sent, recv, peer, 1};
      for (int column = 0; column < 10; ++column)
        sqlite3_bind_int64(call, column + 1, values[column]);
      if (function <= 2)
        sqlite3_bind_int64(call, 11, id);
      else
        sqlite3_bind_null(call, 11);
      sqlite3_step(call);
      sqlite3_reset(call);
      if (function <= 2) {
        const long long request_values[] = {rank,   id,   function, now, now + 3 * time,
                                            id + 1, peer, sent,     recv};
        for (int column = 0; column < 9; ++column)
          sqlite3_bind_int64(request, column + 1, request_values[column]);
        sqlite3_step(request);
        sqlite3_reset(request);
      }
      const int bin =
          bytes == 0 ? -1 : static_cast<int>(std::bit_width(static_cast<unsigned long long>(bytes))) - 1;
      auto& s = stats[{rank, function, bin, peer}];
      ++s.count;
      s.sent += sent;
      s.recv += recv;
      s.total += time;
      s.min = std::min(s.min, time);
      s.max = std::max(s.max, time);
      now += time + 800;
    }
    fmt::print(stderr, "\rreport_10m: generating rank {}/{}", rank + 1, kRanks);
  }
  sqlite3_finalize(call);
  sqlite3_finalize(request);
  for (const auto& [key, s] : stats)
    execute(db, fmt::format("INSERT INTO call_stats VALUES ({}, {}, 0, {}, {}, 0, {}, {}, {}, {}, {}, {})",
                            std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), s.count,
                            s.sent, s.recv, s.total, s.min, s.max));
  execute(db, "COMMIT");
  sqlite3_close(db);
  // The merge's own last step, with the merge's connection settings, so the file is what
  // `commlens merge` would have written and its cost is what the merge pays for it.
  fmt::print(stderr, "\nreport_10m: creating the timeline tiles\n");
  commlens::SqliteDatabase merged(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
  merged.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;");
  const auto tiles_began = std::chrono::steady_clock::now();
  const auto tiles = commlens::build_timeline_tiles(merged);
  fmt::print("timeline tiles {:.2f} s ({} levels, {} tiles)\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - tiles_began).count(),
             tiles.levels, tiles.tiles);
  merged.exec("ANALYZE");
}

// User NVTX ranges over the whole trace: per rank a "train" range holding 100 "step" ranges, so
// every call lies in a range and the NVTX phase sweep reads all of mpi_calls.
void add_nvtx_ranges(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    fmt::print(stderr, "report_10m: cannot open {}\n", path);
    std::exit(2);
  }
  execute(db,
          "BEGIN; DELETE FROM nvtx_ranges;"
          "INSERT INTO nvtx_ranges SELECT rank, MIN(start_ns), MAX(end_ns) + 1, NULL, 'train' FROM mpi_calls "
          "GROUP BY rank;"
          "WITH RECURSIVE step(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM step WHERE n < 99) "
          "INSERT INTO nvtx_ranges SELECT t.rank, t.start_ns + (t.end_ns - t.start_ns) * n / 100, "
          "t.start_ns + (t.end_ns - t.start_ns) * (n + 1) / 100, NULL, 'step' FROM nvtx_ranges t, step "
          "WHERE t.name = 'train'; COMMIT;");
  sqlite3_close(db);
}

struct Timing {
  double seconds = 0;
  long peak_rss_mib = 0;
  int status = 0;
};

// Runs `commlens report DB --format json ARGUMENTS` with the file in the page cache, as it is when a
// report follows the merge that wrote it. Peak RSS is the largest of all children so far.
Timing time_report(const std::string& commlens, const std::string& path, const std::string& arguments) {
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(
      fmt::format("'{}' report '{}' --format json {} > /dev/null", commlens, path, arguments).c_str());
  Timing timing;
  timing.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  timing.peak_rss_mib = usage.ru_maxrss / 1024;
  timing.status = WEXITSTATUS(status);
  return timing;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: report_10m COMMLENS DB [CALLS]\n");
    return 2;
  }
  const std::string commlens = argv[1], path = argv[2];
  const long long calls = argc > 3 ? std::atoll(argv[3]) : 10'000'000;
  if (std::getenv("REPORT_10M_REUSE") == nullptr) {
    const auto start = std::chrono::steady_clock::now();
    generate(path, calls);
    fmt::print("generated {} calls in {:.1f} s\n", calls,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const auto plain = time_report(commlens, path, "");
  fmt::print("commlens report over {} calls: {:.2f} s, peak RSS {} MiB, exit status {}\n", calls,
             plain.seconds, plain.peak_rss_mib, plain.status);
  if (const char* baseline = std::getenv("REPORT_10M_BASELINE")) {
    const auto before = time_report(baseline, path, "");
    fmt::print("  baseline {}: {:.2f} s, exit status {}; this binary / baseline {:.2f}x\n", baseline,
               before.seconds, before.status, plain.seconds / before.seconds);
  }
  if (std::getenv("REPORT_10M_NVTX") == nullptr)
    return plain.status == 0 ? 0 : 1;
  add_nvtx_ranges(path);
  const auto sections = time_report(commlens, path, "");
  fmt::print("  with 101 NVTX ranges per rank (NVTX phase section): {:.2f} s ({:.2f}x), exit status {}\n",
             sections.seconds, sections.seconds / plain.seconds, sections.status);
  const auto filtered = time_report(commlens, path, "--phase train");
  fmt::print(
      "  --phase train (every call selected): {:.2f} s ({:.2f}x), peak RSS so far {} MiB, exit status {}\n",
      filtered.seconds, filtered.seconds / plain.seconds, filtered.peak_rss_mib, filtered.status);
  return plain.status == 0 && sections.status == 0 && filtered.status == 0 ? 0 : 1;
}
