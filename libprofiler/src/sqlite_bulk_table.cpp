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

using sqlite_pages::Child;
using sqlite_pages::LeafPage;
using sqlite_pages::Value;

namespace {

// SQLite's lock-byte page holds the byte at this offset; no b-tree may use it.
constexpr std::uint64_t kPendingByte = 0x40000000;
constexpr std::size_t kHeaderSize = 100;
constexpr std::size_t kSpillBufferBytes = std::size_t{8} << 20;

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

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw SqliteError(fmt::format("{}: bulk load: {}: {}", path, what, std::strerror(errno)));
}

class File {
public:
  File(const std::string& path, int flags) : path_(path), fd_(::open(path.c_str(), flags | O_CLOEXEC, 0644)) {
    if (fd_ < 0) {
      fail(path, "open");
    }
  }
  ~File() { ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  int fd() const { return fd_; }
  void read_at(std::span<std::uint8_t> bytes, std::uint64_t offset) const {
    if (::pread(fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset)) !=
        static_cast<ssize_t>(bytes.size())) {
      fail(path_, "short read");
    }
  }
  void write_at(std::span<const std::uint8_t> bytes, std::uint64_t offset) const {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t wrote =
          ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
      if (wrote <= 0) {
        fail(path_, "write");
      }
      done += static_cast<std::size_t>(wrote);
    }
  }
  std::uint64_t size() const {
    struct stat info {};
    if (::fstat(fd_, &info) != 0) {
      fail(path_, "stat");
    }
    return static_cast<std::uint64_t>(info.st_size);
  }

private:
  std::string path_;
  int fd_;
};

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

// Copies bytes between the files in the kernel where it can (no pass through this process).
void copy_range(int from, std::uint64_t from_offset, const File& to, std::uint64_t to_offset,
                std::uint64_t bytes) {
  while (bytes > 0) {
    auto in = static_cast<off64_t>(from_offset);
    auto out = static_cast<off64_t>(to_offset);
    ssize_t copied = ::copy_file_range(from, &in, to.fd(), &out, bytes, 0);
    if (copied < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
      std::vector<std::uint8_t> buffer(std::min<std::uint64_t>(bytes, kSpillBufferBytes));
      copied = ::pread(from, buffer.data(), buffer.size(), static_cast<off_t>(from_offset));
      if (copied > 0) {
        to.write_at({buffer.data(), static_cast<std::size_t>(copied)}, to_offset);
      }
    }
    if (copied <= 0) {
      throw SqliteError(fmt::format("bulk load: copying pages: {}", std::strerror(errno)));
    }
    from_offset += static_cast<std::uint64_t>(copied);
    to_offset += static_cast<std::uint64_t>(copied);
    bytes -= static_cast<std::uint64_t>(copied);
  }
}

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
    : path_(std::move(path)), spill_path_(path_ + "-bulk"), page_size_(page_size), usable_size_(usable_size),
      tables_(std::move(tables)) {
  spill_fd_ = ::open(spill_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (spill_fd_ < 0) {
    fail(spill_path_, "open");
  }
  spill_buffer_.reserve(kSpillBufferBytes);
}

SqliteBulkLoader::~SqliteBulkLoader() {
  ::close(spill_fd_);
  std::remove(spill_path_.c_str());
}

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
    table.leaves.push_back(
        Child{static_cast<std::uint32_t>(spilled_pages_ + spill_buffer_.size() / page_size_),
              table.pending.last_rowid()});
    spill(table.pending.bytes());
    table.pending.clear();
    table.pending.add(rowid, record);
  }
  table.last_rowid = rowid;
}

std::optional<std::int64_t> SqliteBulkLoader::last_rowid(std::size_t index) const {
  return tables_[index].last_rowid;
}

void SqliteBulkLoader::spill(std::span<const std::uint8_t> page) {
  spill_buffer_.insert(spill_buffer_.end(), page.begin(), page.end());
  if (spill_buffer_.size() >= kSpillBufferBytes) {
    flush_spill();
  }
}

void SqliteBulkLoader::flush_spill() {
  std::size_t done = 0;
  while (done < spill_buffer_.size()) {
    const ssize_t wrote = ::pwrite(spill_fd_, spill_buffer_.data() + done, spill_buffer_.size() - done,
                                   static_cast<off_t>(spilled_pages_ * page_size_ + done));
    if (wrote <= 0) {
      fail(spill_path_, "write");
    }
    done += static_cast<std::size_t>(wrote);
  }
  spilled_pages_ += spill_buffer_.size() / page_size_;
  spill_buffer_.clear();
}

SqliteBulkLoader::Mark SqliteBulkLoader::mark() const {
  Mark mark{spilled_pages_ + spill_buffer_.size() / page_size_, {}};
  for (const Table& table : tables_) {
    mark.tables.push_back(Mark::TableState{table.pending, table.leaves.size(), table.last_rowid});
  }
  return mark;
}

void SqliteBulkLoader::rollback(const Mark& mark) {
  if (mark.spill_pages >= spilled_pages_) {
    spill_buffer_.resize((mark.spill_pages - spilled_pages_) * page_size_);
  } else {
    spill_buffer_.clear();
    spilled_pages_ = mark.spill_pages;
    if (::ftruncate(spill_fd_, static_cast<off_t>(spilled_pages_ * page_size_)) != 0) {
      fail(spill_path_, "truncate");
    }
  }
  for (std::size_t index = 0; index < tables_.size(); ++index) {
    tables_[index].pending = mark.tables[index].pending;
    tables_[index].leaves.resize(mark.tables[index].leaves);
    tables_[index].last_rowid = mark.tables[index].last_rowid;
  }
}

void SqliteBulkLoader::install() {
  // A table with spilled leaves gets its last one too; one that fits a page is its root alone.
  for (Table& table : tables_) {
    if (!table.leaves.empty()) {
      table.leaves.push_back(
          Child{static_cast<std::uint32_t>(spilled_pages_ + spill_buffer_.size() / page_size_),
                table.pending.last_rowid()});
      spill(table.pending.bytes());
      table.pending.clear();
    }
  }
  flush_spill();

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
  // The spill file's pages, in runs of consecutive page numbers.
  std::vector<std::uint32_t> leaf_page(spilled_pages_);
  for (std::uint64_t index = 0; index < spilled_pages_; ++index) {
    leaf_page[index] = allocate();
  }
  for (std::uint64_t first = 0; first < spilled_pages_;) {
    std::uint64_t end = first + 1;
    while (end < spilled_pages_ && leaf_page[end] == leaf_page[end - 1] + 1) {
      ++end;
    }
    copy_range(spill_fd_, first * page_size_, file, std::uint64_t{leaf_page[first] - 1} * page_size_,
               (end - first) * page_size_);
    first = end;
  }

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
    if (!children.empty()) {
      sqlite_pages::write_interior_page(children, usable_size_, page);
      file.write_at(page, std::uint64_t{table.root_page - 1} * page_size_);
    } else if (!table.pending.empty()) {
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
