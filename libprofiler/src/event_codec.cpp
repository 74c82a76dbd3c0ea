#include "commlens/profiler/event_codec.hpp"

#include <algorithm>

namespace commlens {

namespace {
std::uint64_t zigzag(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}
std::int64_t unzigzag(std::uint64_t value) {
  return static_cast<std::int64_t>(value >> 1) ^ -static_cast<std::int64_t>(value & 1);
}
// The header byte: kind in bit 0, location in bits 1-3, implementation in bits 4-7.
std::uint8_t header_of(const EventRecord& record) {
  return static_cast<std::uint8_t>(static_cast<unsigned>(record.kind) |
                                   (static_cast<unsigned>(record.location) << 1) |
                                   (record.implementation << 4));
}
} // namespace

namespace {
std::uint8_t* put_unsigned(std::uint8_t* out, std::uint64_t value) noexcept {
  while (value >= 0x80) {
    *out++ = static_cast<std::uint8_t>(value | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<std::uint8_t>(value);
  return out;
}
std::uint8_t* put_signed(std::uint8_t* out, std::int64_t value) noexcept {
  return put_unsigned(out, zigzag(value));
}

// One record after the previous one of the chunk (its start time and call id).
std::uint8_t* encode(std::uint8_t* out, const EventRecord& record, std::uint64_t previous_start,
                     std::uint64_t previous_call_id) noexcept {
  *out++ = header_of(record);
  out = put_unsigned(out, record.function);
  out = put_unsigned(out, record.datatype);
  out = put_signed(out, static_cast<std::int64_t>(record.start_ticks - previous_start));
  out = put_unsigned(out, record.end_ticks - record.start_ticks);
  out = put_signed(out, static_cast<std::int64_t>(record.call_id - previous_call_id));
  out = put_unsigned(out, record.bytes_sent);
  out = put_unsigned(out, record.bytes_recv);
  // Posting calls carry their own id as request id: store the difference, 0 meaning none.
  out = put_unsigned(out, record.request_id == 0
                              ? 0
                              : 1 + zigzag(static_cast<std::int64_t>(record.request_id - record.call_id)));
  out = put_unsigned(out, static_cast<std::uint32_t>(record.communicator_index + 1)); // kNoCommunicator -> 0
  out = put_signed(out, record.peer);
  return put_signed(out, record.tag_or_root);
}
} // namespace

void ChunkEncoder::append(std::span<const EventRecord> records) {
  if (records.empty()) {
    return;
  }
  const std::size_t needed = size_ + records.size() * kMaxRecordBytes;
  if (buffer_.size() < needed) {
    buffer_.resize(std::max(2 * buffer_.size(), needed));
  }
  std::uint8_t* out = buffer_.data() + size_;
  std::uint64_t previous_start = previous_start_;
  std::uint64_t previous_call_id = previous_call_id_;
  for (const EventRecord& record : records) {
    out = encode(out, record, previous_start, previous_call_id);
    previous_start = record.start_ticks;
    previous_call_id = record.call_id;
  }
  size_ = static_cast<std::size_t>(out - buffer_.data());
  count_ += records.size();
  previous_start_ = previous_start;
  previous_call_id_ = previous_call_id;
}

void ChunkEncoder::clear() noexcept {
  size_ = 0;
  count_ = 0;
  previous_start_ = 0;
  previous_call_id_ = 0;
}

bool ChunkDecoder::get_unsigned(std::uint64_t& value) noexcept {
  value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (position_ >= bytes_.size()) {
      return false;
    }
    const std::uint8_t byte = bytes_[position_++];
    value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      return true;
    }
  }
  return false;
}

bool ChunkDecoder::get_signed(std::int64_t& value) noexcept {
  std::uint64_t raw = 0;
  if (!get_unsigned(raw)) {
    return false;
  }
  value = unzigzag(raw);
  return true;
}

bool ChunkDecoder::next(EventRecord& record) noexcept {
  if (position_ >= bytes_.size() || malformed_) {
    return false;
  }
  const std::uint8_t header = bytes_[position_++];
  std::uint64_t function = 0, datatype = 0, duration = 0, bytes_sent = 0, bytes_recv = 0, request = 0,
                communicator = 0;
  std::int64_t start_delta = 0, id_delta = 0, peer = 0, tag_or_root = 0;
  if (!get_unsigned(function) || !get_unsigned(datatype) || !get_signed(start_delta) ||
      !get_unsigned(duration) || !get_signed(id_delta) || !get_unsigned(bytes_sent) ||
      !get_unsigned(bytes_recv) || !get_unsigned(request) || !get_unsigned(communicator) ||
      !get_signed(peer) || !get_signed(tag_or_root)) {
    malformed_ = true;
    return false;
  }
  record = EventRecord{};
  record.kind = static_cast<RecordKind>(header & 1);
  record.location = static_cast<BufferLocation>((header >> 1) & 7);
  record.implementation = static_cast<std::uint8_t>(header >> 4);
  record.function = static_cast<FunctionId>(function);
  record.datatype = static_cast<std::uint8_t>(datatype);
  record.start_ticks = previous_start_ + static_cast<std::uint64_t>(start_delta);
  record.end_ticks = record.start_ticks + duration;
  record.call_id = previous_call_id_ + static_cast<std::uint64_t>(id_delta);
  record.bytes_sent = bytes_sent;
  record.bytes_recv = bytes_recv;
  record.request_id = request == 0 ? 0 : record.call_id + static_cast<std::uint64_t>(unzigzag(request - 1));
  record.communicator_index = static_cast<std::uint32_t>(communicator - 1);
  record.peer = static_cast<std::int32_t>(peer);
  record.tag_or_root = static_cast<std::int32_t>(tag_or_root);
  previous_start_ = record.start_ticks;
  previous_call_id_ = record.call_id;
  return true;
}

} // namespace commlens
