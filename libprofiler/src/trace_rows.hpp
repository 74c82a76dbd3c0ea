#pragma once
// Rows of mpi_calls and mpi_requests, and the batched inserter the merge writes them with. Calls go
// straight into mpi_call_rows and requests into mpi_request_rows, encoded as the mpi_calls and
// mpi_requests views decode them (schema.cpp). They are written as pages by a SqliteBulkLoader
// where the merged file allows it; otherwise by INSERTs, kBatch rows per statement, as
// per-statement overhead is most of SQLite's cost for rows this small.
#include "commlens/profiler/sqlite.hpp"
#include "sqlite_bulk_table.hpp"
#include "sqlite_pages.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
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

// Where decoded trace rows go (TraceRowWriter: the merged file's tables).
class TraceRowSink {
public:
  virtual void add_call(const CallRow& row) = 0;
  virtual void add_request(const RequestRow& row) = 0;

protected:
  ~TraceRowSink() = default;
};

// The tables TraceRowWriter fills, in the order a SqliteBulkLoader for it is opened with.
inline constexpr std::size_t kBulkCallTable = 0;
inline constexpr std::size_t kBulkRequestTable = 1;
std::vector<std::string> trace_row_tables();

// Rows of one table (its column values in order), inserted kBatch to a statement.
template <std::size_t Columns> class BatchedInsert {
public:
  using Values = std::array<sqlite_pages::Value, Columns>;
  // insert: "INSERT ... INTO table VALUES " (the rows' placeholders are appended).
  BatchedInsert(const SqliteDatabase& db, std::string_view insert);
  void add(const Values& row);
  // Stores rows still waiting for a full batch; call before committing.
  void flush();

private:
  static constexpr int kBatch = 64;
  void bind(SqliteStatement& statement, int first_parameter, const Values& row);
  std::vector<Values> pending_;
  SqliteStatement one_;
  SqliteStatement batch_;
};

// mpi_call_rows' and mpi_request_rows' column values, in order.
using CallValues = std::array<sqlite_pages::Value, 11>;
using RequestValues = std::array<sqlite_pages::Value, 9>;

// Rows a bulk loader could not take in rowid order: a call that ended after calls it made (an MPI
// call from inside another, run by a callback of MPI's) and a request completed long after later
// ones. They are inserted with SQL once the pages are in the file (insert_late_rows).
struct LateRows {
  std::vector<CallValues> calls;
  std::vector<RequestValues> requests;
  void append(LateRows&& more);
};
// INSERT of the calls, INSERT OR REPLACE of the requests (as the views' triggers do), into db's
// mpi_call_rows and mpi_request_rows.
void insert_late_rows(const SqliteDatabase& db, const LateRows& rows);
// Kept beside pages not yet installed, in tables `<prefix>_calls` and `<prefix>_requests` shaped as
// mpi_call_rows and mpi_request_rows (created by the caller); read from those of `schema`.
void store_late_rows(const SqliteDatabase& db, const std::string& prefix, const LateRows& rows);
LateRows read_late_rows(const SqliteDatabase& db, const std::string& schema, const std::string& prefix);

class TraceRowWriter final : public TraceRowSink {
public:
  // Writes into mpi_call_rows / mpi_request_rows of db's main schema: through `bulk` (opened on
  // trace_row_tables()) when not null, else by INSERTs; hands every call to `tiles` (null: no
  // tiles). The bulk loader takes rows in rowid order. Calls come in the order they ended, which
  // is id order but for calls made inside another (the outer one ends last): the loader places
  // those in the leaf being filled, and leaves the rare one below it for INSERTs. Requests come in
  // completion order, so they wait in a window of kHeldRequests, sorted, until a later one pushes
  // them out or flush(); a request below the last one written is left for INSERTs. Both:
  // take_late_rows().
  TraceRowWriter(const SqliteDatabase& db, SqliteBulkLoader* bulk, TimelineTileBuilder* tiles);
  void add_call(const CallRow& row) override;
  void add_request(const RequestRow& row) override;
  // Stores rows still waiting for a full batch (or in the window) and the open tiles; call before
  // committing.
  void flush();
  std::uint64_t calls() const noexcept { return calls_written_; }
  // Rows the bulk loader could not take, in arrival order: to be inserted once its pages are in
  // the file (insert_late_rows()).
  LateRows take_late_rows() { return std::move(late_rows_); }

private:
  static constexpr std::size_t kCallColumns = 11;
  static constexpr std::size_t kHeldRequests = std::size_t{1} << 16;
  struct HeldRecord {
    std::array<std::uint8_t, 96> bytes; // 9 columns: at most 10 header and 72 value bytes
    std::uint8_t size;
  };
  void write_lowest_held();
  SqliteBulkLoader* bulk_;
  std::optional<BatchedInsert<kCallColumns>> calls_;
  std::optional<BatchedInsert<std::tuple_size_v<RequestValues>>> requests_;
  std::map<std::int64_t, HeldRecord> held_requests_; // by rowid; a later row of one id replaces it
  LateRows late_rows_;
  std::vector<std::uint8_t> record_;
  TimelineTileBuilder* tiles_;
  std::uint64_t calls_written_ = 0;
};

} // namespace commlens
