#pragma once
// Rows of mpi_calls and mpi_requests, and the batched inserter the merge writes them with. Calls go
// straight into mpi_call_rows, encoded as the mpi_calls view decodes them (schema.cpp). Per-statement
// overhead is most of SQLite's cost for rows this small, so calls are inserted kBatch rows per
// statement.
#include "commlens/profiler/sqlite.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace commlens {

struct CallRow {
  std::uint64_t id;
  int rank;
  int thread;
  int function_id;
  std::int64_t start_ns;
  std::int64_t end_ns;
  std::uint64_t bytes_sent;
  std::uint64_t bytes_recv;
  int peer;
  std::optional<int> tag;
  std::optional<std::int64_t> comm_id;
  std::optional<int> root;
  std::optional<std::uint64_t> request_id;
  int buffer_location;
  int implementation;
  int phase;
  std::optional<int> datatype;
};

struct RequestRow {
  int rank;
  std::uint64_t request_id;
  int function_id;
  std::int64_t post_ns;
  std::int64_t complete_ns;
  std::uint64_t completion_call_id;
  int peer;
  std::uint64_t bytes_sent;
  std::uint64_t bytes_recv;
  std::optional<std::int64_t> comm_id;
};

class TraceRowWriter {
public:
  // Inserts into `schema`.mpi_calls / mpi_requests of db ("main" for the file itself).
  explicit TraceRowWriter(const SqliteDatabase& db);
  void insert_call(const CallRow& row);
  void insert_request(const RequestRow& row);
  // Stores calls still waiting for a full batch; call before committing.
  void flush();

private:
  static constexpr int kBatch = 64;
  static constexpr int kCallColumns = 11; // of mpi_call_rows
  static void bind_call(SqliteStatement& statement, int first_parameter, const CallRow& row);

  std::vector<CallRow> pending_;
  SqliteStatement insert_call_;
  SqliteStatement insert_call_batch_;
  SqliteStatement insert_request_;
};

} // namespace commlens
