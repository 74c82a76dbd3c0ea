#include "sqlite_pages.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <utility>

namespace commlens::sqlite_pages {
namespace {

void put_big_endian(std::uint8_t* out, std::uint64_t value, std::size_t bytes) {
  for (std::size_t index = bytes; index-- > 0;) {
    out[index] = static_cast<std::uint8_t>(value);
    value >>= 8;
  }
}

// Serial type and byte count of an integer (schema format 4).
std::pair<std::uint8_t, std::size_t> integer_type(std::int64_t value) {
  if (value == 0 || value == 1) {
    return {static_cast<std::uint8_t>(8 + value), 0};
  }
  const auto fits = [value](int bits) {
    const std::int64_t limit = std::int64_t{1} << (bits - 1);
    return value >= -limit && value < limit;
  };
  if (fits(8)) {
    return {1, 1};
  }
  if (fits(16)) {
    return {2, 2};
  }
  if (fits(24)) {
    return {3, 3};
  }
  if (fits(32)) {
    return {4, 4};
  }
  if (fits(48)) {
    return {5, 6};
  }
  return {6, 8};
}

constexpr std::size_t kLeafHeader = 8;
constexpr std::size_t kInteriorHeader = 12;

} // namespace

std::size_t varint_size(std::uint64_t value) {
  std::size_t bytes = 1;
  while (bytes < 9 && value >= (std::uint64_t{1} << (7 * bytes))) {
    ++bytes;
  }
  return bytes;
}

std::size_t write_varint(std::uint8_t* out, std::uint64_t value) {
  const std::size_t size = varint_size(value);
  if (size == 9) { // eight groups of 7 bits, then the low 8 bits whole
    out[8] = static_cast<std::uint8_t>(value);
    value >>= 8;
    for (int index = 7; index >= 0; --index) {
      out[index] = static_cast<std::uint8_t>((value & 0x7F) | 0x80);
      value >>= 7;
    }
    return size;
  }
  for (std::size_t index = size; index-- > 0;) {
    out[index] = static_cast<std::uint8_t>((value & 0x7F) | (index + 1 < size ? 0x80 : 0));
    value >>= 7;
  }
  return size;
}

void append_varint(std::vector<std::uint8_t>& out, std::uint64_t value) {
  std::array<std::uint8_t, 9> bytes{};
  const std::size_t size = write_varint(bytes.data(), value);
  out.insert(out.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
}

void append_record(std::span<const Value> values, std::vector<std::uint8_t>& out) {
  // Serial types 0-9 are one varint byte each; the header's size counts its own varint.
  std::size_t header_size = values.size() + 1;
  if (varint_size(header_size) > 1) {
    header_size = values.size() + varint_size(values.size() + 2);
  }
  // Room for the largest body; the record is cut to its size at the end.
  const std::size_t start = out.size();
  out.resize(start + header_size + 8 * values.size());
  std::uint8_t* header = out.data() + start;
  header += write_varint(header, header_size);
  std::uint8_t* body = out.data() + start + header_size;
  for (const Value& value : values) {
    if (!value) {
      *header++ = 0;
      continue;
    }
    const auto [type, bytes] = integer_type(*value);
    *header++ = type;
    put_big_endian(body, static_cast<std::uint64_t>(*value), bytes);
    body += bytes;
  }
  out.resize(static_cast<std::size_t>(body - out.data()));
}

std::size_t max_local_payload(std::size_t usable_size) {
  return usable_size - 35;
}

LeafPage::LeafPage(std::size_t page_size, std::size_t usable_size)
    : page_(page_size, 0), usable_size_(usable_size), content_start_(usable_size) {}

bool LeafPage::write_cell(std::int64_t rowid, std::span<const std::uint8_t> record) {
  const std::size_t cell_size =
      varint_size(record.size()) + varint_size(static_cast<std::uint64_t>(rowid)) + record.size();
  const std::size_t pointers_end = kLeafHeader + 2 * (rowids_.size() + 1);
  if (pointers_end + cell_size > content_start_) {
    return false;
  }
  content_start_ -= cell_size;
  std::uint8_t* cell = &page_[content_start_];
  cell += write_varint(cell, record.size());
  cell += write_varint(cell, static_cast<std::uint64_t>(rowid));
  std::copy(record.begin(), record.end(), cell);
  return true;
}

bool LeafPage::add(std::int64_t rowid, std::span<const std::uint8_t> record) {
  if (!write_cell(rowid, record)) {
    return false;
  }
  put_big_endian(&page_[kLeafHeader + 2 * rowids_.size()], content_start_, 2);
  rowids_.push_back(rowid);
  return true;
}

bool LeafPage::insert(std::int64_t rowid, std::span<const std::uint8_t> record) {
  const auto at = std::lower_bound(rowids_.begin(), rowids_.end(), rowid);
  if (at == rowids_.end()) {
    return add(rowid, record);
  }
  if (*at == rowid || !write_cell(rowid, record)) {
    return false;
  }
  // The pointers from the insertion point on move up one slot.
  const auto index = static_cast<std::size_t>(at - rowids_.begin());
  std::uint8_t* pointer = &page_[kLeafHeader + 2 * index];
  std::copy_backward(pointer, &page_[kLeafHeader + 2 * rowids_.size()],
                     &page_[kLeafHeader + 2 * (rowids_.size() + 1)]);
  put_big_endian(pointer, content_start_, 2);
  rowids_.insert(at, rowid);
  return true;
}

std::span<const std::uint8_t> LeafPage::bytes() {
  page_[0] = kTableLeaf;
  put_big_endian(&page_[1], 0, 2); // no freeblock
  put_big_endian(&page_[3], rowids_.size(), 2);
  put_big_endian(&page_[5], content_start_ == 65536 ? 0 : content_start_, 2); // 65536 is written 0
  page_[7] = 0;                                                               // no fragmented bytes
  return page_;
}

void LeafPage::clear() {
  std::fill(page_.begin(), page_.end(), 0);
  content_start_ = usable_size_;
  rowids_.clear();
}

std::size_t interior_capacity(std::size_t usable_size) {
  // A cell: a 4-byte child page and a varint key of at most 9 bytes, and its 2-byte pointer.
  return (usable_size - kInteriorHeader) / (2 + 4 + 9) + 1;
}

void write_interior_page(std::span<const Child> children, std::size_t usable_size,
                         std::span<std::uint8_t> page) {
  assert(children.size() >= 2 && children.size() <= interior_capacity(usable_size));
  std::fill(page.begin(), page.end(), 0);
  const std::size_t cells = children.size() - 1;
  std::size_t content_start = usable_size;
  for (std::size_t index = 0; index < cells; ++index) {
    const auto key = static_cast<std::uint64_t>(children[index].max_rowid);
    content_start -= 4 + varint_size(key);
    put_big_endian(&page[content_start], children[index].page, 4);
    write_varint(&page[content_start + 4], key);
    put_big_endian(&page[kInteriorHeader + 2 * index], content_start, 2);
  }
  page[0] = kTableInterior;
  put_big_endian(&page[3], cells, 2);
  put_big_endian(&page[5], content_start == 65536 ? 0 : content_start, 2);
  put_big_endian(&page[8], children.back().page, 4);
}

} // namespace commlens::sqlite_pages
