#pragma once
// Rows of mpi_calls and mpi_requests, and the batched inserter the merge writes them with. Calls go
// straight into mpi_call_rows and requests into mpi_request_rows, encoded as the mpi_calls and
// mpi_requests views decode them (schema.cpp). Per-statement overhead is most of SQLite's cost for
// rows this small, so rows are inserted kBatch per statement.
#include "commlens/profiler/sqlite.hpp"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace commlens {

class TimelineTileBuilder;

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

// Where decoded trace rows go: the merged file (TraceRowWriter), or a pass that only looks at them.
class TraceRowSink {
public:
  virtual void add_call(const CallRow& row) = 0;
  virtual void add_request(const RequestRow& row) = 0;

protected:
  ~TraceRowSink() = default;
};

// Rows of one table, inserted kBatch to a statement.
template <typename Row> class BatchedInsert {
public:
  using Bind = void (*)(SqliteStatement& statement, int first_parameter, const Row& row);
  // insert: "INSERT ... INTO table VALUES " (the rows' placeholders are appended).
  BatchedInsert(const SqliteDatabase& db, std::string_view insert, int columns, Bind bind);
  void add(const Row& row);
  // Stores rows still waiting for a full batch; call before committing.
  void flush();

private:
  static constexpr int kBatch = 64;
  int columns_;
  Bind bind_;
  std::vector<Row> pending_;
  SqliteStatement one_;
  SqliteStatement batch_;
};

class TraceRowWriter final : public TraceRowSink {
public:
  // Inserts into mpi_call_rows / mpi_request_rows of db's main schema, and hands every call to
  // `tiles` (null: no tiles).
  TraceRowWriter(const SqliteDatabase& db, TimelineTileBuilder* tiles);
  void add_call(const CallRow& row) override;
  void add_request(const RequestRow& row) override;
  // Stores rows still waiting for a full batch and the open tiles; call before committing.
  void flush();

private:
  BatchedInsert<CallRow> calls_;
  BatchedInsert<RequestRow> requests_;
  TimelineTileBuilder* tiles_;
};

} // namespace commlens
