#include "trace_rows.hpp"

#include "commlens/profiler/timeline_tiles.hpp"

#include <fmt/format.h>

#include <string>

namespace commlens {

namespace {

std::int64_t as_int(std::uint64_t value) {
  return static_cast<std::int64_t>(value);
}

std::string insert_rows(std::string_view insert, int columns, int rows) {
  std::string one_row = "(?";
  for (int column = 1; column < columns; ++column) {
    one_row += ",?";
  }
  one_row += ")";
  std::string sql(insert);
  for (int row = 0; row < rows; ++row) {
    sql += (row == 0 ? "" : ",") + one_row;
  }
  return sql;
}

// mpi_call_rows.code (schema.cpp); a value outside its bits would decode as another.
std::int64_t encode_call_code(const CallRow& row) {
  if (row.function_id < 0 || row.function_id > 2047 || row.buffer_location < 0 || row.buffer_location > 3 ||
      row.implementation < 0 || row.implementation > 15 || row.phase < 0) {
    throw SqliteError(fmt::format("call {}: function {}, buffer location {}, implementation {} or phase {} "
                                  "out of mpi_call_rows.code's range",
                                  row.id, row.function_id, row.buffer_location, row.implementation,
                                  row.phase));
  }
  return std::int64_t{row.function_id} | std::int64_t{row.buffer_location} << 11 |
         std::int64_t{row.implementation} << 13 | std::int64_t{row.root.has_value()} << 17 |
         std::int64_t{row.phase} << 18;
}

// The columns of mpi_call_rows, in order.
constexpr int kCallColumns = 11;
void bind_call(SqliteStatement& s, int first, const CallRow& row) {
  s.bind(first, as_int(row.id)).bind(first + 1, row.start_ns).bind(first + 2, row.end_ns - row.start_ns);
  s.bind(first + 3, encode_call_code(row)).bind(first + 4, std::int64_t{row.peer});
  s.bind(first + 5, as_int(row.bytes_sent)).bind(first + 6, as_int(row.bytes_recv));
  s.bind_integer(first + 7, row.root ? row.root : row.tag);
  s.bind_integer(first + 8, row.comm_id);
  s.bind_integer(first + 9, row.datatype);
  s.bind_integer(first + 10, row.request_id ? std::optional(as_int(row.id - *row.request_id)) : std::nullopt);
}

// The columns of mpi_request_rows, in order.
constexpr int kRequestColumns = 9;
void bind_request(SqliteStatement& s, int first, const RequestRow& row) {
  s.bind(first, as_int(row.request_id))
      .bind(first + 1, row.post_ns)
      .bind(first + 2, row.complete_ns - row.post_ns);
  s.bind(first + 3, as_int(row.completion_call_id - row.request_id))
      .bind(first + 4, std::int64_t{row.function_id});
  s.bind(first + 5, std::int64_t{row.peer}).bind(first + 6, as_int(row.bytes_sent));
  s.bind(first + 7, as_int(row.bytes_recv)).bind_integer(first + 8, row.comm_id);
}

} // namespace

template <typename Row>
BatchedInsert<Row>::BatchedInsert(const SqliteDatabase& db, std::string_view insert, int columns, Bind bind)
    : columns_(columns), bind_(bind), one_(db.prepare(insert_rows(insert, columns, 1))),
      batch_(db.prepare(insert_rows(insert, columns, kBatch))) {
  pending_.reserve(kBatch);
}

template <typename Row> void BatchedInsert<Row>::add(const Row& row) {
  pending_.push_back(row);
  if (pending_.size() == kBatch) {
    for (int index = 0; index < kBatch; ++index) {
      bind_(batch_, 1 + index * columns_, pending_[index]);
    }
    batch_.run();
    pending_.clear();
  }
}

template <typename Row> void BatchedInsert<Row>::flush() {
  for (const Row& row : pending_) {
    bind_(one_, 1, row);
    one_.run();
  }
  pending_.clear();
}

TraceRowWriter::TraceRowWriter(const SqliteDatabase& db, TimelineTileBuilder* tiles)
    : calls_(db, "INSERT INTO mpi_call_rows VALUES ", kCallColumns, bind_call),
      // A request's second row (none is known to occur) replaces its first, as the view's trigger does.
      requests_(db, "INSERT OR REPLACE INTO mpi_request_rows VALUES ", kRequestColumns, bind_request),
      tiles_(tiles) {}

void TraceRowWriter::add_call(const CallRow& row) {
  calls_.add(row);
  if (tiles_ != nullptr) {
    tiles_->add_call(as_int(row.id), row.function_id, row.start_ns, row.end_ns);
  }
}

void TraceRowWriter::add_request(const RequestRow& row) {
  requests_.add(row);
}

void TraceRowWriter::flush() {
  calls_.flush();
  requests_.flush();
  if (tiles_ != nullptr) {
    tiles_->flush();
  }
}

} // namespace commlens
