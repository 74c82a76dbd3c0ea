#include "test_database.hpp"

#include "commlens/profiler/schema.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace commlens::test {

std::filesystem::path make_temp_directory(std::string_view prefix) {
  static std::atomic<int> sequence{0};
  const auto directory =
      std::filesystem::temp_directory_path() /
      (std::string(prefix) + "-" + std::to_string(getpid()) + "-" + std::to_string(sequence++));
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  return directory;
}

TestDatabase::TestDatabase(std::filesystem::path path) : path_(std::move(path)) {
  if (sqlite3_open(path_.c_str(), &handle_) != SQLITE_OK)
    throw std::runtime_error("cannot create " + path_.string());
  execute(schema::kCreateTables);
  execute("PRAGMA application_id = " + std::to_string(schema::kApplicationId));
  execute("PRAGMA user_version = " + std::to_string(schema::kVersion));
}

TestDatabase::~TestDatabase() {
  close();
}

void TestDatabase::execute(std::string_view sql) {
  char* message = nullptr;
  if (sqlite3_exec(handle_, std::string(sql).c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string error = message != nullptr ? message : "unknown error";
    sqlite3_free(message);
    throw std::runtime_error("test SQL failed: " + error);
  }
}

void TestDatabase::close() {
  sqlite3_close(handle_);
  handle_ = nullptr;
}

// Ranks 0 and 1 run 10 s, rank 2 runs 20 s; phase 1 starts at 4 s. Time in MPI:
//   rank 0: Send 400 + 1000 ns, Allreduce 1 s            = 1'000'001'400 ns
//   rank 1: Recv 2000 ns, Allreduce 2 s                  = 2'000'002'000 ns
//   rank 2: Allreduce 3 s, Barrier 1 s                   = 4'000'000'000 ns
void fill_three_rank_run(TestDatabase& database) {
  database.execute(R"sql(
INSERT INTO run (key, value) VALUES ('mode', 'summary'), ('command', 'mpirun -np 3 ./app');
INSERT INTO ranks (rank, host, pid, init_ns, finalize_ns, dropped_events, summary_overflow, finalized) VALUES
  (0, 'node-a', 100, 5000, 10000000000, 0, 0, 1),
  (1, 'node-a', 101, 5000, 10000000000, 5, 0, 1),
  (2, 'node-b', 102, 7000, 20000000000, 0, 2, 1);
INSERT INTO functions (id, name, family) VALUES (1, 'MPI_Send', 'p2p'), (2, 'MPI_Recv', 'p2p'),
  (3, 'MPI_Allreduce', 'collective'), (4, 'MPI_Barrier', 'collective');
INSERT INTO phases (rank, phase, start_ns, end_ns, pcontrol_level) VALUES (0, 0, 0, 4000000000, NULL), (0, 1, 4000000000, NULL, 1),
  (1, 0, 0, 4000000000, NULL), (1, 1, 4000000000, NULL, 1),
  (2, 0, 0, 4000000000, NULL), (2, 1, 4000000000, NULL, 1);
INSERT INTO call_stats (rank, function_id, comm_id, size_bin, peer, phase, count, bytes_sent, bytes_recv,
                        time_total_ns, time_min_ns, time_max_ns) VALUES
  (0, 1, 0, 10, 1, 0, 4, 4096, 0, 400, 90, 110),
  (0, 1, 0, 12, 2, 1, 2, 10000, 0, 1000, 400, 600),
  (1, 2, 0, 10, 0, 0, 4, 0, 4096, 2000, 300, 700),
  (0, 3, 0, 3, -1, 1, 10, 80, 80, 1000000000, 50000000, 150000000),
  (1, 3, 0, 3, -1, 1, 10, 80, 80, 2000000000, 100000000, 300000000),
  (2, 3, 0, 3, -1, 1, 10, 80, 80, 3000000000, 200000000, 400000000),
  (2, 4, 0, -1, -1, 0, 3, 0, 0, 1000000000, 300000000, 400000000);
)sql");
}

void fill_rank_file(TestDatabase& database, int rank) {
  const auto calls = rank + 1;
  database.execute(
      "INSERT INTO run (key, value) VALUES ('world_size', '2'), ('mode', 'summary');"
      "INSERT INTO functions (id, name, family) VALUES (3, 'MPI_Allreduce', 'collective');" +
      fmt::format(
          "INSERT INTO ranks (rank, host, pid, init_ns, finalize_ns, finalized, tick_origin, tick_origin_ns, "
          "ns_per_tick) VALUES ({0}, 'node-a', {1}, 1000, 10000000000, 1, 0, 1000, 1.0);"
          "INSERT INTO call_stats (rank, function_id, comm_id, size_bin, peer, phase, count, "
          "bytes_sent, bytes_recv, time_total_ns, time_min_ns, time_max_ns) VALUES ({0}, 3, 0, 3, "
          "-1, 0, {2}, {3}, {3}, {4}, 1000000, "
          "1000000);",
          rank, 100 + rank, calls, 8 * calls, 1'000'000 * calls));
}

} // namespace commlens::test
