#include "sqlite_bulk_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace commlens {

using sqlite_file::fail;
using sqlite_file::File;
using sqlite_pages::Child;
using sqlite_pages::LeafPage;
using sqlite_pages::Value;

namespace {

// SQLite's lock-byte page holds the byte at this offset; no b-tree may use it.
constexpr std::uint64_t kPendingByte = 0x40000000;
constexpr std::size_t kHeaderSize = 100;

std::uint32_t big_endian(const std::uint8_t* bytes, std::size_t size) {
  std::uint32_t value = 0;
  for (std::size_t index = 0; index < size; ++index) {
    value = value << 8 | bytes[index];
  }
  return value;
}

void put_u32(std::uint8_t* bytes, std::uint32_t value) {
  for (int index = 3; index >= 0; --index) {
    bytes[index] = static_cast<std::uint8_t>(value);
    value >>= 8;
  }
}

// What page 1's header says about the file (fileformat2.html, "The Database Header").
struct Header {
  std::array<std::uint8_t, kHeaderSize> bytes{};
  std::size_t page_size() const {
    const std::uint32_t size = big_endian(&bytes[16], 2);
    return size == 1 ? 65536 : size;
  }
  std::size_t reserved() const { return bytes[20]; }
  std::uint32_t change_counter() const { return big_endian(&bytes[24], 4); }
  std::uint32_t pages() const { return big_endian(&bytes[28], 4); }
  std::uint32_t version_valid_for() const { return big_endian(&bytes[92], 4); }
  // Empty when the loader can write this file.
  std::string unsupported() const {
    if (std::memcmp(bytes.data(), "SQLite format 3", 16) != 0) {
      return "not a SQLite 3 file";
    }
    if (bytes[18] != 1 || bytes[19] != 1) {
      return "not a rollback-journal file (WAL)";
    }
    if (big_endian(&bytes[44], 4) != 4) {
      return "schema format is not 4";
    }
    if (big_endian(&bytes[52], 4) != 0) {
      return "auto_vacuum is on (pointer-map pages)";
    }
    if (page_size() < 512 || (page_size() & (page_size() - 1)) != 0 || page_size() - reserved() < 480) {
      return "unexpected page size or reserved bytes";
    }
    return {};
  }
};

Header read_header(const File& file) {
  Header header;
  file.read_at(header.bytes, 0);
  return header;
}

// Whether an INTEGER value is what SQLite stores for a column of this declared type: columns of
// INTEGER affinity (a type containing "INT") keep integers as they are.
bool integer_affinity(std::string type) {
  std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::toupper(c); });
  return type.find("INT") != std::string::npos;
}

} // namespace

PageShape page_shape_of(const std::string& path) {
  const Header header = read_header(File(path, O_RDONLY));
  if (std::memcmp(header.bytes.data(), "SQLite format 3", 16) != 0) {
    throw SqliteError(path + ": not a SQLite 3 file");
  }
  return {header.page_size(), header.page_size() - header.reserved()};
}

std::unique_ptr<SqliteBulkLoader>
SqliteBulkLoader::open(const SqliteDatabase& db, const std::vector<std::string>& names, std::string& why) {
  const auto refuse = [&why](std::string reason) {
    why = std::move(reason);
    return std::unique_ptr<SqliteBulkLoader>();
  };
  if (db.path().empty() || db.query_int64("PRAGMA main.auto_vacuum") != 0) {
    return refuse("an in-memory database or auto_vacuum");
  }
  const Header header = read_header(File(db.path(), O_RDONLY));
  if (const std::string reason = header.unsupported(); !reason.empty()) {
    return refuse(reason);
  }
  const std::size_t usable_size = header.page_size() - header.reserved();
  std::vector<Table> tables;
  for (const std::string& name : names) {
    auto list = db.prepare("SELECT type, ncol, wr FROM pragma_table_list WHERE schema = 'main' AND name = ?");
    list.bind(1, std::string_view(name));
    if (!list.step() || list.column_text(0) != "table" || list.column_int64(2) != 0) {
      return refuse(name + " is not a rowid table");
    }
    auto others =
        db.prepare("SELECT count(*) FROM sqlite_schema WHERE type IN ('index', 'trigger') AND tbl_name = ?");
    others.bind(1, std::string_view(name));
    others.step();
    auto definition =
        db.prepare("SELECT rootpage, upper(sql) FROM sqlite_schema WHERE type = 'table' AND name = ?");
    definition.bind(1, std::string_view(name));
    definition.step();
    auto foreign = db.prepare("SELECT count(*) FROM pragma_foreign_key_list(?)");
    foreign.bind(1, std::string_view(name));
    foreign.step();
    if (others.column_int64(0) != 0 || foreign.column_int64(0) != 0 ||
        definition.column_text(1).find("CHECK") != std::string::npos) {
      return refuse(name + " has indexes, triggers, foreign keys or CHECK constraints");
    }
    if (db.query_int64(fmt::format("SELECT EXISTS (SELECT 1 FROM main.\"{}\")", name)) != 0) {
      return refuse(name + " is not empty");
    }
    Table table{name,
                static_cast<std::uint32_t>(definition.column_int64(0)),
                static_cast<std::size_t>(list.column_int64(1)),
                0,
                {},
                LeafPage(header.page_size(), usable_size),
                {},
                {},
                {}};
    auto columns = db.prepare("SELECT cid, type, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid");
    columns.bind(1, std::string_view(name));
    int keys = 0;
    bool integer_key = false;
    while (columns.step()) {
      if (!integer_affinity(columns.column_text(1))) {
        return refuse(name + " has a column that is not INTEGER");
      }
      table.not_null.push_back(columns.column_int64(2) != 0);
      if (columns.column_int64(3) != 0) {
        ++keys;
        table.rowid_column = static_cast<std::size_t>(columns.column_int64(0));
        integer_key = columns.column_text(1) == "INTEGER";
      }
    }
    // INTEGER PRIMARY KEY, exactly so spelled, is the rowid; the record holds NULL in its place.
    if (table.not_null.size() != table.columns) { // generated columns are not in table_info
      return refuse(name + " has generated columns");
    }
    if (keys != 1 || !integer_key) {
      return refuse(name + " has no INTEGER PRIMARY KEY");
    }
    // The largest record: its header (a byte per column, and the size) and 8 bytes per column.
    const std::size_t largest = sqlite_pages::varint_size(table.columns + 2) + table.columns * 9;
    if (largest > sqlite_pages::max_local_payload(usable_size)) {
      return refuse(name + ": a row may not fit a leaf page");
    }
    tables.push_back(std::move(table));
  }
  return std::unique_ptr<SqliteBulkLoader>(
      new SqliteBulkLoader(db.path(), header.page_size(), usable_size, std::move(tables)));
}

SqliteBulkLoader::SqliteBulkLoader(std::string path, std::size_t page_size, std::size_t usable_size,
                                   std::vector<Table> tables)
    : path_(std::move(path)), page_size_(page_size), usable_size_(usable_size), tables_(std::move(tables)),
      sequence_(path_ + "-bulk", page_size_) {}

SqliteBulkLoader::~SqliteBulkLoader() = default;

std::int64_t SqliteBulkLoader::encode(std::size_t index, std::span<const Value> row,
                                      std::vector<std::uint8_t>& record) {
  const Table& table = tables_[index];
  if (row.size() != table.columns) {
    throw SqliteError(fmt::format("{}: {} values for {} columns", table.name, row.size(), table.columns));
  }
  for (std::size_t column = 0; column < row.size(); ++column) {
    if (!row[column] && (table.not_null[column] || column == table.rowid_column)) {
      throw SqliteError(fmt::format("NOT NULL constraint failed: {} column {}", table.name, column));
    }
  }
  scratch_row_.assign(row.begin(), row.end());
  scratch_row_[table.rowid_column].reset();
  record.clear();
  sqlite_pages::append_record(scratch_row_, record);
  return *row[table.rowid_column];
}

void SqliteBulkLoader::append(std::size_t index, std::span<const Value> row) {
  const std::int64_t rowid = encode(index, row, scratch_record_);
  append(index, rowid, scratch_record_);
}

void SqliteBulkLoader::append(std::size_t index, std::int64_t rowid, std::span<const std::uint8_t> record) {
  Table& table = tables_[index];
  if (table.last_rowid && rowid <= *table.last_rowid) {
    throw BulkOrderError(fmt::format("{}: rowid {} after {}", table.name, rowid, *table.last_rowid));
  }
  if (!table.pending.add(rowid, record)) {
    spill_pending(table);
    table.pending.add(rowid, record);
  }
  table.first_rowid = table.first_rowid.value_or(rowid);
  table.last_rowid = rowid;
}

bool SqliteBulkLoader::place(std::size_t index, std::int64_t rowid, std::span<const std::uint8_t> record) {
  Table& table = tables_[index];
  if (!table.last_rowid || rowid > *table.last_rowid) {
    append(index, rowid, record);
    return true;
  }
  // The leaf being filled starts above the last leaf written, whose largest rowid its parent's key is.
  const bool after_written = table.leaves.empty() || rowid > table.leaves.back().max_rowid;
  if (table.pending.empty() || !after_written || !table.pending.insert(rowid, record)) {
    return false;
  }
  table.first_rowid = std::min(*table.first_rowid, rowid);
  return true;
}

void SqliteBulkLoader::spill_pending(Table& table) {
  if (!table.pending.empty()) {
    table.leaves.push_back(Child{sequence_.add(table.pending.bytes()), table.pending.last_rowid()});
    table.pending.clear();
  }
}

SqliteBulkLoader::SavedLeaves SqliteBulkLoader::save(const std::string& path) {
  SavedLeaves saved{0, {}};
  for (Table& table : tables_) {
    spill_pending(table);
    saved.tables.push_back(SavedTable{table.first_rowid, table.last_rowid, table.leaves});
  }
  saved.pages = sequence_.size();
  sequence_.save_as(path);
  return saved;
}

void SqliteBulkLoader::append_leaves(const std::string& path, const SavedLeaves& saved) {
  if (saved.tables.size() != tables_.size()) {
    throw SqliteError(
        fmt::format("{}: leaves of {} tables for {}", path, saved.tables.size(), tables_.size()));
  }
  for (std::size_t index = 0; index < tables_.size(); ++index) {
    const Table& table = tables_[index];
    const std::optional<std::int64_t> first = saved.tables[index].first_rowid;
    if (first && table.last_rowid && *first <= *table.last_rowid) {
      throw BulkOrderError(fmt::format("{}: rowid {} after {}", table.name, *first, *table.last_rowid));
    }
  }
  const std::uint32_t base = sequence_.add_file(path, saved.pages);
  for (std::size_t index = 0; index < tables_.size(); ++index) {
    Table& table = tables_[index];
    const SavedTable& from = saved.tables[index];
    if (from.leaves.empty()) {
      continue;
    }
    spill_pending(table); // its rows come before the saved ones
    for (const Child& leaf : from.leaves) {
      table.leaves.push_back(Child{base + leaf.page, leaf.max_rowid});
    }
    table.first_rowid = table.first_rowid.value_or(*from.first_rowid);
    table.last_rowid = from.last_rowid;
  }
}

std::optional<std::int64_t> SqliteBulkLoader::last_rowid(std::size_t index) const {
  return tables_[index].last_rowid;
}

SqliteBulkLoader::Mark SqliteBulkLoader::mark() const {
  Mark mark{sequence_.mark(), {}};
  for (const Table& table : tables_) {
    mark.tables.push_back(
        Mark::TableState{table.pending, table.leaves.size(), table.first_rowid, table.last_rowid});
  }
  return mark;
}

void SqliteBulkLoader::rollback(const Mark& mark) {
  sequence_.rollback(mark.sequence);
  for (std::size_t index = 0; index < tables_.size(); ++index) {
    tables_[index].pending = mark.tables[index].pending;
    tables_[index].leaves.resize(mark.tables[index].leaves);
    tables_[index].first_rowid = mark.tables[index].first_rowid;
    tables_[index].last_rowid = mark.tables[index].last_rowid;
  }
}

void SqliteBulkLoader::install() {
  // A table with leaves in the sequence gets its last one too; one whose rows fit a page has
  // that page as its root alone.
  for (Table& table : tables_) {
    if (!table.leaves.empty()) {
      spill_pending(table);
    }
  }

  const File file(path_, O_RDWR);
  Header header = read_header(file);
  const bool pages_known = header.change_counter() == header.version_valid_for() &&
                           std::uint64_t{header.pages()} * page_size_ == file.size();
  if (!header.unsupported().empty() || header.page_size() != page_size_ ||
      header.page_size() - header.reserved() != usable_size_ || !pages_known ||
      std::filesystem::exists(path_ + "-journal") || std::filesystem::exists(path_ + "-wal")) {
    throw SqliteError(fmt::format("{}: bulk load: the file changed shape since it was opened", path_));
  }
  std::vector<std::uint8_t> page(page_size_);
  for (const Table& table : tables_) {
    file.read_at(page, std::uint64_t{table.root_page - 1} * page_size_);
    if (page[0] != sqlite_pages::kTableLeaf || big_endian(&page[3], 2) != 0) {
      throw SqliteError(fmt::format("{}: bulk load: {} is no longer empty", path_, table.name));
    }
  }

  // New pages follow the file's last, skipping the lock-byte page.
  std::uint32_t next_page = header.pages() + 1;
  const auto lock_page = static_cast<std::uint32_t>(kPendingByte / page_size_ + 1);
  const auto allocate = [&next_page, lock_page] {
    next_page += next_page == lock_page ? 1 : 0;
    return next_page++;
  };
  // The sequence's pages follow, in order; a table's only leaf (saved by another loader) is
  // written as its root instead.
  std::vector<std::uint32_t> leaf_page(sequence_.size(), 0);
  for (const Table& table : tables_) {
    if (table.leaves.size() == 1) {
      leaf_page[table.leaves.front().page] = table.root_page;
    }
  }
  for (std::uint32_t& number : leaf_page) {
    number = number != 0 ? number : allocate();
  }
  sequence_.copy_to(file, leaf_page);

  const std::size_t capacity = sqlite_pages::interior_capacity(usable_size_);
  for (Table& table : tables_) {
    std::vector<Child> children;
    for (const Child& leaf : table.leaves) {
      children.push_back(Child{leaf_page[leaf.page], leaf.max_rowid});
    }
    // Levels of interior pages, each child count spread evenly so that none has fewer than two.
    while (children.size() > capacity) {
      const std::size_t pages = (children.size() + capacity - 1) / capacity;
      std::vector<Child> parents;
      for (std::size_t index = 0; index < pages; ++index) {
        const std::span<const Child> group(children.data() + children.size() * index / pages,
                                           children.data() + children.size() * (index + 1) / pages);
        const std::uint32_t number = allocate();
        sqlite_pages::write_interior_page(group, usable_size_, page);
        file.write_at(page, std::uint64_t{number - 1} * page_size_);
        parents.push_back(Child{number, group.back().max_rowid});
      }
      children = std::move(parents);
    }
    if (children.size() > 1) {
      sqlite_pages::write_interior_page(children, usable_size_, page);
      file.write_at(page, std::uint64_t{table.root_page - 1} * page_size_);
    } else if (children.empty() && !table.pending.empty()) {
      file.write_at(table.pending.bytes(), std::uint64_t{table.root_page - 1} * page_size_);
    }
  }

  // The file's size in pages, valid for the next change counter.
  const std::uint32_t pages = next_page - 1;
  if (::ftruncate(file.fd(), static_cast<off_t>(std::uint64_t{pages} * page_size_)) != 0) {
    fail(path_, "truncate");
  }
  const std::uint32_t counter = header.change_counter() + 1;
  put_u32(&header.bytes[24], counter);
  put_u32(&header.bytes[28], pages);
  put_u32(&header.bytes[92], counter);
  file.write_at(header.bytes, 0);
}

} // namespace commlens
