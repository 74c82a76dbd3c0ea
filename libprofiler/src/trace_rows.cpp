#include "trace_rows.hpp"

#include <fmt/format.h>

#include <string>

namespace commlens {

namespace {

std::int64_t as_int(std::uint64_t value) {
  return static_cast<std::int64_t>(value);
}

std::string call_rows(int count) {
  const std::string one_row = "(?,?,?,?,?,?,?,?,?,?,?)";
  std::string rows = one_row;
  for (int row = 1; row < count; ++row) {
    rows += "," + one_row;
  }
  return "INSERT INTO mpi_call_rows VALUES " + rows;
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

} // namespace

TraceRowWriter::TraceRowWriter(const SqliteDatabase& db)
    : insert_call_(db.prepare(call_rows(1))), insert_call_batch_(db.prepare(call_rows(kBatch))),
      insert_request_(db.prepare("INSERT OR REPLACE INTO mpi_requests VALUES (?,?,?,?,?,?,?,?,?,?)")) {
  pending_.reserve(kBatch);
}

void TraceRowWriter::bind_call(SqliteStatement& s, int first, const CallRow& row) {
  s.bind(first, as_int(row.id)).bind(first + 1, row.start_ns).bind(first + 2, row.end_ns - row.start_ns);
  s.bind(first + 3, encode_call_code(row)).bind(first + 4, std::int64_t{row.peer});
  s.bind(first + 5, as_int(row.bytes_sent)).bind(first + 6, as_int(row.bytes_recv));
  s.bind_integer(first + 7, row.root ? row.root : row.tag);
  s.bind_integer(first + 8, row.comm_id);
  s.bind_integer(first + 9, row.datatype);
  s.bind_integer(first + 10, row.request_id ? std::optional(as_int(row.id - *row.request_id)) : std::nullopt);
}

void TraceRowWriter::insert_call(const CallRow& row) {
  pending_.push_back(row);
  if (pending_.size() == kBatch) {
    for (int index = 0; index < kBatch; ++index) {
      bind_call(insert_call_batch_, 1 + index * kCallColumns, pending_[index]);
    }
    insert_call_batch_.run();
    pending_.clear();
  }
}

void TraceRowWriter::flush() {
  for (const CallRow& row : pending_) {
    bind_call(insert_call_, 1, row);
    insert_call_.run();
  }
  pending_.clear();
}

void TraceRowWriter::insert_request(const RequestRow& row) {
  auto& s = insert_request_;
  s.bind(1, std::int64_t{row.rank}).bind(2, as_int(row.request_id)).bind(3, std::int64_t{row.function_id});
  s.bind(4, row.post_ns).bind(5, row.complete_ns).bind(6, as_int(row.completion_call_id));
  s.bind(7, std::int64_t{row.peer}).bind(8, as_int(row.bytes_sent)).bind(9, as_int(row.bytes_recv));
  s.bind_integer(10, row.comm_id);
  s.run();
}

} // namespace commlens
