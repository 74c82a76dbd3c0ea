#pragma once
// Compact encoding of EventRecords for the trace_chunks table: the writer stores whole buffers
// as one BLOB per drain (SQLite cost per chunk, not per event), about 15 bytes an event instead
// of 64. Fields are LEB128 varints, signed ones zigzag-coded, times and ids as deltas from the
// previous record of the chunk, so every chunk decodes on its own.
#include "commlens/profiler/event_record.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace commlens {

class ChunkEncoder {
public:
  void append(const EventRecord& record) { append(std::span<const EventRecord>(&record, 1)); }
  // A drained span at once: one capacity check, the running deltas kept in registers.
  void append(std::span<const EventRecord> records);
  std::size_t count() const noexcept { return count_; }
  std::span<const std::uint8_t> bytes() const noexcept { return {buffer_.data(), size_}; }
  void clear() noexcept;

private:
  // A header byte and eleven varints of at most ten bytes each.
  static constexpr std::size_t kMaxRecordBytes = 1 + 11 * 10;

  // Sized ahead of the data, so a record is written through a plain pointer with no bounds check
  // per byte (the checks of push_back were most of the writer's time per event); the chunk is the
  // first size_ bytes.
  std::vector<std::uint8_t> buffer_;
  std::size_t size_ = 0;
  std::size_t count_ = 0;
  std::uint64_t previous_start_ = 0;
  std::uint64_t previous_call_id_ = 0;
};

class ChunkDecoder {
public:
  explicit ChunkDecoder(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}
  // False at the end of the chunk, or when the bytes are malformed (a torn chunk ends early).
  bool next(EventRecord& record) noexcept;
  bool malformed() const noexcept { return malformed_; }

private:
  bool get_unsigned(std::uint64_t& value) noexcept;
  bool get_signed(std::int64_t& value) noexcept;

  std::span<const std::uint8_t> bytes_;
  std::size_t position_ = 0;
  bool malformed_ = false;
  std::uint64_t previous_start_ = 0;
  std::uint64_t previous_call_id_ = 0;
};

} // namespace commlens
