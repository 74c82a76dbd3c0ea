#include "trace_rows.hpp"

#include "commlens/profiler/timeline_tiles.hpp"

#include <fmt/format.h>

#include <algorithm>
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

using sqlite_pages::Value;

Value widen(std::optional<int> value) {
  return value ? Value(*value) : std::nullopt;
}

CallValues call_columns(const CallRow& row) {
  return {as_int(row.id),
          row.start_ns,
          row.end_ns - row.start_ns,
          encode_call_code(row),
          std::int64_t{row.peer},
          as_int(row.bytes_sent),
          as_int(row.bytes_recv),
          widen(row.root ? row.root : row.tag),
          row.comm_id,
          widen(row.datatype),
          row.request_id ? std::optional(as_int(row.id - *row.request_id)) : std::nullopt};
}

RequestValues request_columns(const RequestRow& row) {
  return {as_int(row.request_id),
          row.post_ns,
          row.complete_ns - row.post_ns,
          as_int(row.completion_call_id - row.request_id),
          std::int64_t{row.function_id},
          std::int64_t{row.peer},
          as_int(row.bytes_sent),
          as_int(row.bytes_recv),
          row.comm_id};
}

} // namespace

std::vector<std::string> trace_row_tables() {
  return {"mpi_call_rows", "mpi_request_rows"};
}

template <std::size_t Columns>
BatchedInsert<Columns>::BatchedInsert(const SqliteDatabase& db, std::string_view insert)
    : one_(db.prepare(insert_rows(insert, Columns, 1))),
      batch_(db.prepare(insert_rows(insert, Columns, kBatch))) {
  pending_.reserve(kBatch);
}

template <std::size_t Columns>
void BatchedInsert<Columns>::bind(SqliteStatement& statement, int first_parameter, const Values& row) {
  for (std::size_t column = 0; column < Columns; ++column) {
    statement.bind_integer(first_parameter + static_cast<int>(column), row[column]);
  }
}

template <std::size_t Columns> void BatchedInsert<Columns>::add(const Values& row) {
  pending_.push_back(row);
  if (pending_.size() == kBatch) {
    for (int index = 0; index < kBatch; ++index) {
      bind(batch_, 1 + index * static_cast<int>(Columns), pending_[static_cast<std::size_t>(index)]);
    }
    batch_.run();
    pending_.clear();
  }
}

template <std::size_t Columns> void BatchedInsert<Columns>::flush() {
  for (const Values& row : pending_) {
    bind(one_, 1, row);
    one_.run();
  }
  pending_.clear();
}

constexpr const char* kInsertRequests = "INSERT OR REPLACE INTO mpi_request_rows VALUES ";

TraceRowWriter::TraceRowWriter(const SqliteDatabase& db, SqliteBulkLoader* bulk, TimelineTileBuilder* tiles)
    : bulk_(bulk), tiles_(tiles) {
  if (bulk_ == nullptr) {
    calls_.emplace(db, "INSERT INTO mpi_call_rows VALUES ");
    // A request's second row (none is known to occur) replaces its first, as the view's trigger does.
    requests_.emplace(db, kInsertRequests);
  }
}

void TraceRowWriter::add_call(const CallRow& row) {
  ++calls_written_;
  const CallValues values = call_columns(row);
  if (bulk_ == nullptr) {
    calls_->add(values);
  } else if (const std::int64_t rowid = bulk_->encode(kBulkCallTable, values, record_);
             !bulk_->place(kBulkCallTable, rowid, record_)) {
    late_rows_.calls.push_back(values);
  }
  if (tiles_ != nullptr) {
    tiles_->add_call(as_int(row.id), row.function_id, row.start_ns, row.end_ns);
  }
}

void TraceRowWriter::add_request(const RequestRow& row) {
  const RequestValues values = request_columns(row);
  if (bulk_ == nullptr) {
    requests_->add(values);
    return;
  }
  const std::optional<std::int64_t> last_written = bulk_->last_rowid(kBulkRequestTable);
  if (last_written && *values[0] <= *last_written) {
    late_rows_.requests.push_back(values);
    return;
  }
  const std::int64_t rowid = bulk_->encode(kBulkRequestTable, values, record_);
  HeldRecord& held = held_requests_[rowid];
  std::copy(record_.begin(), record_.end(), held.bytes.begin());
  held.size = static_cast<std::uint8_t>(record_.size());
  if (held_requests_.size() > kHeldRequests) {
    write_lowest_held();
  }
}

void TraceRowWriter::write_lowest_held() {
  const auto lowest = held_requests_.begin();
  bulk_->append(kBulkRequestTable, lowest->first, {lowest->second.bytes.data(), lowest->second.size});
  held_requests_.erase(lowest);
}

void TraceRowWriter::flush() {
  if (bulk_ == nullptr) {
    calls_->flush();
    requests_->flush();
  } else {
    while (!held_requests_.empty()) {
      write_lowest_held();
    }
  }
  if (tiles_ != nullptr) {
    tiles_->flush();
  }
}

void LateRows::append(LateRows&& more) {
  calls.insert(calls.end(), more.calls.begin(), more.calls.end());
  requests.insert(requests.end(), more.requests.begin(), more.requests.end());
}

void insert_late_rows(const SqliteDatabase& db, const LateRows& rows) {
  BatchedInsert<std::tuple_size_v<CallValues>> calls(db, "INSERT INTO mpi_call_rows VALUES ");
  for (const CallValues& call : rows.calls) {
    calls.add(call);
  }
  calls.flush();
  BatchedInsert<std::tuple_size_v<RequestValues>> requests(db, kInsertRequests);
  for (const RequestValues& request : rows.requests) {
    requests.add(request);
  }
  requests.flush();
}

namespace {

template <std::size_t Columns>
void store_values(const SqliteDatabase& db, const std::string& table,
                  const std::vector<std::array<Value, Columns>>& rows) {
  BatchedInsert<Columns> insert(db, fmt::format("INSERT INTO {} VALUES ", table));
  for (const auto& row : rows) {
    insert.add(row);
  }
  insert.flush();
}

template <std::size_t Columns>
std::vector<std::array<Value, Columns>> read_values(const SqliteDatabase& db, const std::string& table) {
  std::vector<std::array<Value, Columns>> rows;
  auto select = db.prepare(fmt::format("SELECT * FROM {}", table));
  while (select.step()) {
    std::array<Value, Columns>& row = rows.emplace_back();
    for (std::size_t column = 0; column < Columns; ++column) {
      const int index = static_cast<int>(column);
      row[column] = select.column_is_null(index) ? std::nullopt : Value(select.column_int64(index));
    }
  }
  return rows;
}

} // namespace

void store_late_rows(const SqliteDatabase& db, const std::string& prefix, const LateRows& rows) {
  store_values(db, prefix + "_calls", rows.calls);
  store_values(db, prefix + "_requests", rows.requests);
}

LateRows read_late_rows(const SqliteDatabase& db, const std::string& schema, const std::string& prefix) {
  return LateRows{
      read_values<std::tuple_size_v<CallValues>>(db, fmt::format("{}.{}_calls", schema, prefix)),
      read_values<std::tuple_size_v<RequestValues>>(db, fmt::format("{}.{}_requests", schema, prefix))};
}

} // namespace commlens
