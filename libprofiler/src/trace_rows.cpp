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

// mpi_call_rows' columns, in order.
std::array<Value, 11> call_columns(const CallRow& row) {
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

// mpi_request_rows' columns, in order.
std::array<Value, 9> request_columns(const RequestRow& row) {
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

TraceRowWriter::TraceRowWriter(const SqliteDatabase& db, SqliteBulkLoader* bulk, TimelineTileBuilder* tiles)
    : bulk_(bulk), tiles_(tiles) {
  if (bulk_ == nullptr) {
    calls_.emplace(db, "INSERT INTO mpi_call_rows VALUES ");
    // A request's second row (none is known to occur) replaces its first, as the view's trigger does.
    requests_.emplace(db, "INSERT OR REPLACE INTO mpi_request_rows VALUES ");
  }
}

void TraceRowWriter::add_call(const CallRow& row) {
  ++calls_written_;
  if (bulk_ != nullptr) {
    bulk_->append(kBulkCallTable, call_columns(row));
  } else {
    calls_->add(call_columns(row));
  }
  if (tiles_ != nullptr) {
    tiles_->add_call(as_int(row.id), row.function_id, row.start_ns, row.end_ns);
  }
}

void TraceRowWriter::add_request(const RequestRow& row) {
  if (bulk_ == nullptr) {
    requests_->add(request_columns(row));
    return;
  }
  const std::size_t offset = held_bytes_.size();
  const std::int64_t rowid = bulk_->encode(kBulkRequestTable, request_columns(row), record_);
  held_bytes_.insert(held_bytes_.end(), record_.begin(), record_.end());
  held_requests_.push_back(HeldRequest{rowid, offset, record_.size()});
}

void TraceRowWriter::flush() {
  if (bulk_ == nullptr) {
    calls_->flush();
    requests_->flush();
  } else {
    // In rowid order; of two rows of one request the later wins, as INSERT OR REPLACE has it.
    std::stable_sort(held_requests_.begin(), held_requests_.end(),
                     [](const HeldRequest& a, const HeldRequest& b) { return a.rowid < b.rowid; });
    for (std::size_t index = 0; index < held_requests_.size(); ++index) {
      const HeldRequest& request = held_requests_[index];
      if (index + 1 == held_requests_.size() || held_requests_[index + 1].rowid != request.rowid) {
        bulk_->append(kBulkRequestTable, request.rowid, {held_bytes_.data() + request.offset, request.size});
      }
    }
    held_requests_.clear();
    held_bytes_.clear();
  }
  if (tiles_ != nullptr) {
    tiles_->flush();
  }
}

} // namespace commlens
