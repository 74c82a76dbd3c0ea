#include "trace_rows.hpp"

#include <string>

namespace commlens {

namespace {

std::int64_t as_int(std::uint64_t value) {
  return static_cast<std::int64_t>(value);
}

std::string call_rows(int count) {
  const std::string one_row = "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
  std::string rows = one_row;
  for (int row = 1; row < count; ++row) {
    rows += "," + one_row;
  }
  return "INSERT INTO mpi_calls VALUES " + rows;
}

} // namespace

TraceRowWriter::TraceRowWriter(const SqliteDatabase& db)
    : insert_call_(db.prepare(call_rows(1))), insert_call_batch_(db.prepare(call_rows(kBatch))),
      insert_request_(db.prepare("INSERT OR REPLACE INTO mpi_requests VALUES (?,?,?,?,?,?,?,?,?,?)")) {
  pending_.reserve(kBatch);
}

void TraceRowWriter::bind_call(SqliteStatement& s, int first, const CallRow& row) {
  s.bind(first, as_int(row.id))
      .bind(first + 1, std::int64_t{row.rank})
      .bind(first + 2, std::int64_t{row.thread});
  s.bind(first + 3, std::int64_t{row.function_id}).bind(first + 4, row.start_ns).bind(first + 5, row.end_ns);
  s.bind(first + 6, as_int(row.bytes_sent)).bind(first + 7, as_int(row.bytes_recv));
  s.bind(first + 8, std::int64_t{row.peer});
  s.bind_integer(first + 9, row.tag);
  s.bind_integer(first + 10, row.comm_id);
  s.bind_integer(first + 11, row.root);
  s.bind_integer(first + 12, row.request_id);
  s.bind(first + 13, std::int64_t{row.buffer_location}).bind(first + 14, std::int64_t{row.implementation});
  s.bind(first + 15, std::int64_t{row.phase});
  s.bind_integer(first + 16, row.datatype);
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
