#pragma once
// Fills rowid tables of a SQLite file by writing their b-tree pages instead of running INSERTs.
// SQLite spends most of a small row's insert in its virtual machine and b-tree code (binding,
// record building, a cursor seek, page balancing); a row appended here costs its encoding and a
// copy. Rows arrive in ascending rowid order; full leaf pages go to a spill file beside the
// database while SQLite keeps writing the rest of it (sqlite_leaf_sequence.hpp), and leaves that
// another loader saved (a rank's, encoded at MPI_Finalize) join them whole. Once every connection
// to the file is closed,
// install() appends the leaves to the file, builds the interior pages above them, writes the top
// page over each table's (empty) root page and updates page 1's header, in SQLite's documented
// file format (sqlite_pages.hpp). open() refuses any file or table it cannot write that way
// safely, and the caller inserts with SQL instead.
#include "commlens/profiler/sqlite.hpp"
#include "sqlite_leaf_sequence.hpp"
#include "sqlite_pages.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace commlens {

// A row whose rowid is not above its table's last: the rows cannot be bulk-written in this order.
struct BulkOrderError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A file's page size and the bytes of each page that b-tree pages use (less the reserved bytes):
// leaves are copied only between files of one shape.
struct PageShape {
  std::size_t page_size = 0;
  std::size_t usable_size = 0;
  bool operator==(const PageShape&) const = default;
};
// The shape page 1's header gives; throws SqliteError naming the file when it is not a SQLite file.
PageShape page_shape_of(const std::string& path);

class SqliteBulkLoader {
public:
  // Loads `tables` of db's main file: rowid tables with an INTEGER PRIMARY KEY and INTEGER
  // columns only, empty, without indexes, triggers, foreign keys or CHECKs, in a rollback-journal
  // file without auto_vacuum, schema format 4, of a page size whose leaves hold any such row.
  // Null, with the reason in `why`, when any of that does not hold.
  static std::unique_ptr<SqliteBulkLoader> open(const SqliteDatabase& db,
                                                const std::vector<std::string>& tables, std::string& why);
  ~SqliteBulkLoader();
  SqliteBulkLoader(const SqliteBulkLoader&) = delete;
  SqliteBulkLoader& operator=(const SqliteBulkLoader&) = delete;

  // The record of a row given as "INSERT INTO table VALUES (...)" would take it (by the index
  // the table has in open's list); returns its rowid. Throws SqliteError for a NULL in a NOT NULL
  // column or the rowid, as the INSERT would.
  std::int64_t encode(std::size_t table, std::span<const sqlite_pages::Value> row,
                      std::vector<std::uint8_t>& record);
  // Appends an encoded row. Throws BulkOrderError when rowid is not above the table's last.
  void append(std::size_t table, std::int64_t rowid, std::span<const std::uint8_t> record);
  void append(std::size_t table, std::span<const sqlite_pages::Value> row);
  // Appends an encoded row, or puts one whose rowid is below the table's last into the leaf being
  // filled, where it belongs when it lies above that leaf's first row and fits. False, with
  // nothing written, otherwise: the caller inserts the row with SQL once the pages are in.
  bool place(std::size_t table, std::int64_t rowid, std::span<const std::uint8_t> record);
  // The highest rowid appended to the table, if any.
  std::optional<std::int64_t> last_rowid(std::size_t table) const;

  // The leaves of the tables, kept in a file (save()) for another loader to take whole
  // (append_leaves()): page n of the file is leaf n. By table, in open's order.
  struct SavedTable {
    std::optional<std::int64_t> first_rowid, last_rowid;
    std::vector<sqlite_pages::Child> leaves; // page: its number in the file
  };
  struct SavedLeaves {
    std::uint64_t pages = 0;
    std::vector<SavedTable> tables;
  };
  // Writes every table's rows as leaves into `path` (synced to disk); the loader is done with.
  SavedLeaves save(const std::string& path);
  // Appends leaves that a loader of the same tables and page shape saved into `path`, after the
  // rows appended so far. Throws BulkOrderError, appending nothing, when a table's first saved
  // rowid is not above its last.
  void append_leaves(const std::string& path, const SavedLeaves& saved);
  std::size_t page_size() const noexcept { return page_size_; }
  std::size_t usable_size() const noexcept { return usable_size_; }
  PageShape shape() const noexcept { return {page_size_, usable_size_}; }

  // A point to return to: rollback() drops every row appended after mark() was taken.
  struct Mark;
  Mark mark() const;
  void rollback(const Mark& mark);

  // With no connection open on the file: writes the tables into it. Throws SqliteError, leaving
  // the file's tables as open() found them, when the file is no longer as open() found it.
  void install();

private:
  struct Table;
  struct FileShape;
  SqliteBulkLoader(std::string path, std::size_t page_size, std::size_t usable_size,
                   std::vector<Table> tables);
  // Closes a table's leaf being filled, if it holds rows.
  void spill_pending(Table& table);

  std::string path_;
  std::size_t page_size_;
  std::size_t usable_size_;
  std::vector<Table> tables_;
  LeafSequence sequence_;
  std::vector<sqlite_pages::Value> scratch_row_;
  std::vector<std::uint8_t> scratch_record_;
};

struct SqliteBulkLoader::Table {
  std::string name;
  std::uint32_t root_page;
  std::size_t columns;
  std::size_t rowid_column;                // the INTEGER PRIMARY KEY
  std::vector<bool> not_null;              // by column
  sqlite_pages::LeafPage pending;          // the leaf being filled
  std::vector<sqlite_pages::Child> leaves; // page: its number in sequence_
  std::optional<std::int64_t> first_rowid, last_rowid;
};

struct SqliteBulkLoader::Mark {
  LeafSequence::Mark sequence;
  struct TableState {
    sqlite_pages::LeafPage pending;
    std::size_t leaves;
    std::optional<std::int64_t> first_rowid, last_rowid;
  };
  std::vector<TableState> tables;
};

} // namespace commlens
