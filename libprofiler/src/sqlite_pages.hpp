#pragma once
// SQLite's on-disk encoding of a rowid table's b-tree pages, as the file format document
// (https://www.sqlite.org/fileformat2.html) defines it and as much of it as the bulk loader
// (sqlite_bulk_table.hpp) writes: records of integers and NULLs, table leaf pages (type 0x0D) and
// table interior pages (type 0x05). The format is stable: every SQLite 3 release reads it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace commlens::sqlite_pages {

using Value = std::optional<std::int64_t>; // an INTEGER column, or NULL

inline constexpr std::uint8_t kTableLeaf = 0x0D;
inline constexpr std::uint8_t kTableInterior = 0x05;

// SQLite's varint: big-endian groups of 7 bits, the ninth byte carrying 8.
std::size_t varint_size(std::uint64_t value);
// Writes the varint at `out` (room for 9 bytes); returns its size.
std::size_t write_varint(std::uint8_t* out, std::uint64_t value);
void append_varint(std::vector<std::uint8_t>& out, std::uint64_t value);

// A record: its header (size, then each value's serial type), then the values big-endian in the
// fewest bytes of 1, 2, 3, 4, 6 and 8 that hold them; 0 and 1 as serial types 8 and 9, which take
// no bytes (schema format 4). Appends to `out`.
void append_record(std::span<const Value> values, std::vector<std::uint8_t>& out);

// The largest payload a table leaf cell holds on its page (no overflow page): usable size - 35.
std::size_t max_local_payload(std::size_t usable_size);

// A table leaf page being filled with cells (varint payload size, varint rowid, record) from the
// end of its usable space down, their pointers after the 8-byte header in rowid order.
class LeafPage {
public:
  LeafPage(std::size_t page_size, std::size_t usable_size);
  // Appends a cell whose rowid is above the page's last. False when the cell does not fit (the
  // page is full); the record must be within max_local_payload.
  bool add(std::int64_t rowid, std::span<const std::uint8_t> record);
  // Puts a cell among the page's cells in rowid order (the cells' content may lie in any order,
  // their pointers may not). False when it does not fit or the page already holds the rowid.
  bool insert(std::int64_t rowid, std::span<const std::uint8_t> record);
  bool empty() const noexcept { return rowids_.empty(); }
  std::int64_t first_rowid() const noexcept { return rowids_.empty() ? 0 : rowids_.front(); }
  std::int64_t last_rowid() const noexcept { return rowids_.empty() ? 0 : rowids_.back(); }
  // The whole page, header written.
  std::span<const std::uint8_t> bytes();
  void clear();

private:
  // Writes the cell below the content written so far; false when it and one more pointer do not fit.
  bool write_cell(std::int64_t rowid, std::span<const std::uint8_t> record);
  std::vector<std::uint8_t> page_;
  std::size_t usable_size_;
  std::size_t content_start_;
  std::vector<std::int64_t> rowids_; // of the cells, in pointer order
};

// A child of an interior page: its page number and the largest rowid under it.
struct Child {
  std::uint32_t page;
  std::int64_t max_rowid;
};

// Children an interior page of this usable size always holds (cells of the largest key).
std::size_t interior_capacity(std::size_t usable_size);

// Writes an interior page over `page` (page size bytes, zeroed here): a cell (child page, its
// largest rowid) for each child but the last, which is the right-most pointer. 2 to
// interior_capacity children.
void write_interior_page(std::span<const Child> children, std::size_t usable_size,
                         std::span<std::uint8_t> page);

} // namespace commlens::sqlite_pages
