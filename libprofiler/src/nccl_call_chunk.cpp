// Compact chunks of the NCCL collector's per-call fields (nccl_call_chunk.hpp).
#include "commlens/profiler/nccl_call_chunk.hpp"

#include "commlens/profiler/sqlite.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace commlens {
namespace {

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

std::uint64_t zigzag(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}

std::int64_t unzigzag(std::uint64_t value) {
  return static_cast<std::int64_t>(value >> 1) ^ -static_cast<std::int64_t>(value & 1);
}

// Fields that are a value or kNone (-1) are stored as value + 1.
std::uint64_t optional_field(int value) {
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(value) + 1);
}

class Reader {
public:
  explicit Reader(const std::string& chunk) : chunk_(chunk) {}
  bool done() const { return position_ == chunk_.size(); }
  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (position_ == chunk_.size()) {
        throw std::runtime_error("nccl_call_chunks: truncated chunk");
      }
      const auto byte = static_cast<unsigned char>(chunk_[position_++]);
      value |= std::uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80u) == 0) {
        return value;
      }
    }
    throw std::runtime_error("nccl_call_chunks: varint too long");
  }
  int optional_field() { return static_cast<int>(static_cast<std::int64_t>(varint()) - 1); }

private:
  const std::string& chunk_;
  std::size_t position_ = 0;
};

void bind_optional(SqliteStatement& statement, int index, std::int64_t value, std::int64_t none) {
  if (value == none) {
    statement.bind_null(index);
  } else {
    statement.bind(index, value);
  }
}

} // namespace

void encode_nccl_calls(const std::vector<NcclCallFields>& calls, std::string& chunk) {
  chunk.reserve(chunk.size() + calls.size() * 8);
  std::uint64_t previous_id = 0;
  std::int64_t previous_stream = 0;
  for (const NcclCallFields& call : calls) {
    put_varint(chunk, call.call_id - previous_id);
    put_varint(chunk, optional_field(call.details.datatype));
    put_varint(chunk, optional_field(call.details.op));
    put_varint(chunk, optional_field(call.details.root));
    put_varint(chunk, optional_field(call.details.peer));
    put_varint(chunk, static_cast<std::uint64_t>(call.details.group_depth));
    put_varint(chunk, zigzag(call.details.stream - previous_stream));
    previous_id = call.call_id;
    previous_stream = call.details.stream;
  }
}

std::vector<NcclCallFields> decode_nccl_calls(const std::string& chunk) {
  std::vector<NcclCallFields> calls;
  Reader reader(chunk);
  std::uint64_t previous_id = 0;
  std::int64_t previous_stream = 0;
  while (!reader.done()) {
    NcclCallFields& call = calls.emplace_back();
    call.call_id = previous_id + reader.varint();
    call.details.datatype = reader.optional_field();
    call.details.op = reader.optional_field();
    call.details.root = reader.optional_field();
    call.details.peer = reader.optional_field();
    call.details.group_depth = static_cast<int>(reader.varint());
    call.details.stream = previous_stream + unzigzag(reader.varint());
    previous_id = call.call_id;
    previous_stream = call.details.stream;
  }
  return calls;
}

void materialize_nccl_calls(SqliteDatabase& merged, const char* schema, int rank) {
  if (merged.query_int64(fmt::format("SELECT count(*) FROM {}.sqlite_master WHERE type = 'table' AND "
                                     "name = 'nccl_call_chunks'",
                                     schema)) == 0) {
    return; // a rank file of a commlens that stored nccl_calls rows directly (copied as a table)
  }
  auto chunks = merged.prepare(fmt::format("SELECT data FROM {}.nccl_call_chunks ORDER BY id", schema));
  auto insert =
      merged.prepare("INSERT OR REPLACE INTO nccl_calls (call_id, rank, datatype, op, stream, root, "
                     "peer, group_depth) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  while (chunks.step()) {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(chunks.get(), 0));
    const std::string chunk(data != nullptr ? data : "",
                            static_cast<std::size_t>(sqlite3_column_bytes(chunks.get(), 0)));
    for (const NcclCallFields& call : decode_nccl_calls(chunk)) {
      insert.bind(1, static_cast<std::int64_t>(call.call_id)).bind(2, std::int64_t{rank});
      bind_optional(insert, 3, call.details.datatype, NcclCallDetails::kNone);
      bind_optional(insert, 4, call.details.op, NcclCallDetails::kNone);
      bind_optional(insert, 5, call.details.stream, NcclCallDetails::kNoStream);
      bind_optional(insert, 6, call.details.root, NcclCallDetails::kNone);
      bind_optional(insert, 7, call.details.peer, NcclCallDetails::kNone);
      insert.bind(8, std::int64_t{call.details.group_depth}).run();
    }
  }
}

} // namespace commlens
