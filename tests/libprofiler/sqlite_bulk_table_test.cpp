// The bulk loader writes a rowid table's pages itself: what it writes must read back, through
// SQLite, as exactly the rows given (compared with the same rows INSERTed into another file), pass
// PRAGMA integrity_check, and be refused, not written, wherever the file or table is one it does
// not handle.
#include "commlens/profiler/sqlite.hpp"
#include "integrity_check.hpp"
#include "sqlite_bulk_table.hpp"
#include "sqlite_pages.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace commlens;
using sqlite_pages::Value;
using Row = std::vector<Value>;

constexpr const char* kTable =
    "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b INTEGER, c INTEGER)";

std::string fresh_file(const std::string& name) {
  const fs::path path = fs::path(testing::TempDir()) / fmt::format("commlens-bulk-{}.sqlite", name);
  for (const char* suffix : {"", "-journal", "-bulk"}) {
    fs::remove(path.string() + suffix);
  }
  return path.string();
}

SqliteDatabase create(const std::string& path, int page_size = 4096, const char* table = kTable) {
  SqliteDatabase db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  db.exec(fmt::format("PRAGMA page_size={}; PRAGMA journal_mode=OFF;", page_size));
  db.exec(table);
  // Pages of another table before and after t's root, as the merge's small tables are.
  db.exec("CREATE TABLE other (x INTEGER, y TEXT); INSERT INTO other VALUES (1, 'one'), (2, 'two')");
  return db;
}

std::unique_ptr<SqliteBulkLoader> open_loader(const SqliteDatabase& db) {
  std::string why;
  auto loader = SqliteBulkLoader::open(db, {"t"}, why);
  EXPECT_NE(loader, nullptr) << why;
  return loader;
}

// Bulk-loads `rows` into t of a new file; checks they are not visible before install().
std::string bulk_file(const std::string& name, const std::vector<Row>& rows, int page_size = 4096) {
  const std::string path = fresh_file(name);
  std::optional<SqliteDatabase> db(create(path, page_size));
  auto loader = open_loader(*db);
  for (const Row& row : rows) {
    loader->append(0, row);
  }
  db->close();
  db.reset();
  EXPECT_EQ(SqliteDatabase(path, SQLITE_OPEN_READONLY).query_int64("SELECT count(*) FROM t"), 0)
      << "rows appear only when the loader installs its pages";
  loader->install();
  return path;
}

std::string inserted_file(const std::string& name, const std::vector<Row>& rows, int page_size = 4096) {
  const std::string path = fresh_file(name);
  SqliteDatabase db = create(path, page_size);
  db.exec("BEGIN");
  auto insert = db.prepare("INSERT INTO t VALUES (?, ?, ?, ?)");
  for (const Row& row : rows) {
    for (int column = 0; column < 4; ++column) {
      insert.bind_integer(column + 1, row[static_cast<std::size_t>(column)]);
    }
    insert.run();
  }
  db.exec("COMMIT");
  return path;
}

// Loads the rows both ways and compares the files' tables.
void expect_same_as_inserted(const std::string& name, const std::vector<Row>& rows, int page_size = 4096) {
  const std::string bulk = bulk_file(name, rows, page_size);
  const std::string inserted = inserted_file(name + "-sql", rows, page_size);
  SqliteDatabase db(bulk, SQLITE_OPEN_READWRITE);
  EXPECT_EQ(integrity(db), "ok");
  db.prepare("ATTACH DATABASE ? AS sql").bind(1, std::string_view(inserted)).run();
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), static_cast<std::int64_t>(rows.size()));
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM sql.t"), static_cast<std::int64_t>(rows.size()));
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM (SELECT * FROM t EXCEPT SELECT * FROM sql.t)"), 0);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM (SELECT * FROM sql.t EXCEPT SELECT * FROM t)"), 0);
  // Values keep their type (an INTEGER is not read back as a REAL or TEXT).
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t WHERE typeof(a) <> 'integer'"), 0);
  // A seek by rowid finds every row (the interior pages' keys are right).
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM sql.t WHERE NOT EXISTS (SELECT 1 FROM main.t WHERE "
                           "main.t.id = sql.t.id AND main.t.a = sql.t.a)"),
            0);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM other"), 2);
  // SQLite goes on writing the file afterwards.
  db.exec("INSERT INTO t (a) VALUES (7); INSERT INTO other VALUES (3, 'x')");
  EXPECT_EQ(integrity(db), "ok");
  db.close();
  fs::remove(bulk);
  fs::remove(inserted);
}

std::vector<Row> numbered_rows(std::int64_t count, std::int64_t first_id = 1) {
  std::vector<Row> rows;
  for (std::int64_t index = 0; index < count; ++index) {
    rows.push_back(Row{first_id + index, index * 37 - 5000, index % 3 == 0 ? Value() : Value(index),
                       (index * 1000003) % 70000});
  }
  return rows;
}

// The most rows of numbered_rows that one leaf page holds.
std::size_t rows_in_one_leaf(int page_size) {
  sqlite_pages::LeafPage leaf(static_cast<std::size_t>(page_size), static_cast<std::size_t>(page_size));
  std::size_t rows = 0;
  for (Row row : numbered_rows(100000)) {
    const std::int64_t id = *row[0];
    row[0].reset();
    std::vector<std::uint8_t> record;
    sqlite_pages::append_record(row, record);
    if (!leaf.add(id, record)) {
      return rows;
    }
    ++rows;
  }
  return rows;
}

TEST(SqliteBulkTable, VarintsAreSqlitesEncoding) {
  const auto encoded = [](std::uint64_t value) {
    std::vector<std::uint8_t> out;
    sqlite_pages::append_varint(out, value);
    return out;
  };
  EXPECT_EQ(encoded(0), (std::vector<std::uint8_t>{0x00}));
  EXPECT_EQ(encoded(127), (std::vector<std::uint8_t>{0x7F}));
  EXPECT_EQ(encoded(128), (std::vector<std::uint8_t>{0x81, 0x00}));
  EXPECT_EQ(encoded(16383), (std::vector<std::uint8_t>{0xFF, 0x7F}));
  EXPECT_EQ(encoded(16384), (std::vector<std::uint8_t>{0x81, 0x80, 0x00}));
  // Nine bytes: the last carries 8 bits.
  EXPECT_EQ(encoded(~std::uint64_t{0}),
            (std::vector<std::uint8_t>{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}));
  EXPECT_EQ(encoded(std::uint64_t{1} << 56),
            (std::vector<std::uint8_t>{0x80, 0xC0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}));
}

TEST(SqliteBulkTable, EmptyOneAndAFewRows) {
  expect_same_as_inserted("empty", {});
  expect_same_as_inserted("one", numbered_rows(1));
  expect_same_as_inserted("few", numbered_rows(5));
}

TEST(SqliteBulkTable, EverySerialType) {
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::int64_t> values = {0,
                                            1,
                                            -1,
                                            2,
                                            127,
                                            128,
                                            -128,
                                            -129,
                                            32767,
                                            32768,
                                            -32768,
                                            -32769,
                                            8388607,
                                            8388608,
                                            -8388608,
                                            -8388609,
                                            2147483647,
                                            2147483648,
                                            -2147483648,
                                            -2147483649,
                                            (std::int64_t{1} << 47) - 1,
                                            std::int64_t{1} << 47,
                                            -(std::int64_t{1} << 47),
                                            -(std::int64_t{1} << 47) - 1,
                                            max,
                                            min};
  // The same values as rowids, in order: varints of every size, negative ones included.
  std::vector<std::int64_t> rowids = values;
  std::sort(rowids.begin(), rowids.end());
  std::vector<Row> rows;
  for (std::size_t index = 0; index < rowids.size(); ++index) {
    const std::int64_t value = values[index];
    rows.push_back(Row{rowids[index], value, index % 2 == 0 ? Value() : Value(-value), value});
  }
  expect_same_as_inserted("types", rows);
}

TEST(SqliteBulkTable, ExactlyOnePageAndOneRowMore) {
  const std::size_t fits = rows_in_one_leaf(4096);
  ASSERT_GT(fits, 10U);
  for (const std::size_t rows : {fits, fits + 1}) {
    const std::string path = bulk_file("page", numbered_rows(static_cast<std::int64_t>(rows)));
    SqliteDatabase db(path, SQLITE_OPEN_READONLY);
    EXPECT_EQ(integrity(db), "ok");
    // One page: the root alone; one row more: two leaves under the root, appended to the file.
    const std::int64_t pages_before =
        SqliteDatabase(inserted_file("pages", {}), SQLITE_OPEN_READONLY).query_int64("PRAGMA page_count");
    EXPECT_EQ(db.query_int64("PRAGMA page_count"), pages_before + (rows == fits ? 0 : 2));
    EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), static_cast<std::int64_t>(rows));
  }
  expect_same_as_inserted("one-page", numbered_rows(static_cast<std::int64_t>(fits)));
  expect_same_as_inserted("one-page-more", numbered_rows(static_cast<std::int64_t>(fits + 1)));
}

TEST(SqliteBulkTable, ManyLevels) {
  // 512-byte pages hold about 34 children an interior page: 1.1 M rows make four levels.
  expect_same_as_inserted("levels-512", numbered_rows(1100000, -400000), 512);
  expect_same_as_inserted("levels-4096", numbered_rows(300000), 4096);
  expect_same_as_inserted("levels-65536", numbered_rows(300000), 65536);
}

TEST(SqliteBulkTable, ReservedBytesAtPageEnds) {
  const std::string path = fresh_file("reserved");
  {
    SqliteDatabase db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    int reserve = 32;
    ASSERT_EQ(sqlite3_file_control(db.get(), "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve), SQLITE_OK);
    db.exec("PRAGMA journal_mode=OFF");
    db.exec(kTable);
    auto loader = open_loader(db);
    for (const Row& row : numbered_rows(20000)) {
      loader->append(0, row);
    }
    db.close();
    loader->install();
  }
  SqliteDatabase db(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(integrity(db), "ok");
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 20000);
  EXPECT_EQ(db.query_int64("SELECT sum(a) FROM t"), 20000LL * 19999 / 2 * 37 - 5000LL * 20000);
}

TEST(SqliteBulkTable, RollbackDropsRowsAppendedAfterTheMark) {
  const std::string path = fresh_file("rollback");
  const std::vector<Row> rows = numbered_rows(30000);
  {
    std::optional<SqliteDatabase> db(create(path));
    auto loader = open_loader(*db);
    for (std::size_t index = 0; index < 10000; ++index) {
      loader->append(0, rows[index]);
    }
    const SqliteBulkLoader::Mark mark = loader->mark();
    // Pages of rows that will not be kept: more than the loader holds before writing its spill file.
    for (const Row& row : numbered_rows(400000, 10001)) {
      loader->append(0, Row{row[0], 999, 999, 999});
    }
    loader->rollback(mark);
    for (std::size_t index = 10000; index < rows.size(); ++index) {
      loader->append(0, rows[index]);
    }
    db.reset();
    loader->install();
  }
  SqliteDatabase db(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(integrity(db), "ok");
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 30000);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t WHERE a = 999"), 0);
}

// Leaves one loader saved (as a rank does at MPI_Finalize) join another loader's rows whole, between
// rows it appended itself, also after a rollback past them; saved rows not above the last are refused.
TEST(SqliteBulkTable, SavedLeavesJoinAnotherLoadersRows) {
  const std::vector<Row> rows = numbered_rows(40000);
  const std::string saver_path = fresh_file("saver");
  const std::string pages = saver_path + "-pages";
  SqliteBulkLoader::SavedLeaves saved;
  {
    const SqliteDatabase saver_db = create(saver_path);
    auto saver = open_loader(saver_db);
    for (std::size_t index = 10000; index < 30000; ++index) {
      saver->append(0, rows[index]);
    }
    saved = saver->save(pages);
  }
  ASSERT_EQ(saved.tables.size(), 1u);
  EXPECT_EQ(saved.tables[0].first_rowid, 10001);
  EXPECT_EQ(fs::file_size(pages), saved.pages * 4096);

  const std::string path = fresh_file("joined");
  {
    std::optional<SqliteDatabase> db(create(path));
    auto loader = open_loader(*db);
    for (std::size_t index = 0; index < 10000; ++index) {
      loader->append(0, rows[index]);
    }
    const SqliteBulkLoader::Mark mark = loader->mark();
    loader->append_leaves(pages, saved);
    loader->rollback(mark);
    loader->append_leaves(pages, saved);
    EXPECT_THROW(loader->append_leaves(pages, saved), BulkOrderError);
    for (std::size_t index = 30000; index < rows.size(); ++index) {
      loader->append(0, rows[index]);
    }
    db.reset();
    loader->install();
  }
  const std::string inserted = inserted_file("joined-sql", rows);
  SqliteDatabase db(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(integrity(db), "ok");
  db.prepare("ATTACH DATABASE ? AS sql").bind(1, std::string_view(inserted)).run();
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 40000);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM (SELECT * FROM t EXCEPT SELECT * FROM sql.t)"), 0);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM (SELECT * FROM sql.t EXCEPT SELECT * FROM t)"), 0);
  fs::remove(pages);
}

TEST(SqliteBulkTable, RowsOutOfOrderOrNullWhereNotAllowedAreRefused) {
  const std::string path = fresh_file("order");
  SqliteDatabase db = create(path);
  auto loader = open_loader(db);
  loader->append(0, Row{5, 1, 2, 3});
  EXPECT_THROW(loader->append(0, Row{5, 1, 2, 3}), BulkOrderError);
  EXPECT_THROW(loader->append(0, Row{4, 1, 2, 3}), BulkOrderError);
  EXPECT_THROW(loader->append(0, Row{6, Value(), 2, 3}), SqliteError); // a NOT NULL
  EXPECT_THROW(loader->append(0, Row{Value(), 1, 2, 3}), SqliteError); // the rowid
}

// Files and tables the loader does not handle: open() refuses them, and the caller INSERTs.
TEST(SqliteBulkTable, RefusesWhatItCannotWriteSafely) {
  const auto refused = [](const std::string& name, const char* table, const char* setup,
                          const char* before = "") {
    const std::string path = fresh_file(name);
    SqliteDatabase db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    db.exec(before);
    db.exec(table);
    db.exec(setup);
    std::string why;
    const bool refused = SqliteBulkLoader::open(db, {"t"}, why) == nullptr;
    EXPECT_FALSE(why.empty() && refused);
    return refused;
  };
  EXPECT_FALSE(refused("accepted", kTable, ""));
  EXPECT_TRUE(refused("not-empty", kTable, "INSERT INTO t VALUES (1, 2, 3, 4)"));
  EXPECT_TRUE(refused("index", kTable, "CREATE INDEX t_a ON t (a)"));
  EXPECT_TRUE(refused("trigger", kTable, "CREATE TRIGGER t_t AFTER INSERT ON t BEGIN SELECT 1; END"));
  EXPECT_TRUE(refused("real", "CREATE TABLE t (id INTEGER PRIMARY KEY, a REAL)", ""));
  EXPECT_TRUE(refused("no-key", "CREATE TABLE t (id INTEGER, a INTEGER)", ""));
  EXPECT_TRUE(
      refused("without-rowid", "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER) WITHOUT ROWID", ""));
  EXPECT_TRUE(refused("check", "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER CHECK (a > 0))", ""));
  EXPECT_TRUE(refused("unique", "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER UNIQUE)", ""));
  EXPECT_TRUE(
      refused("generated", "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER AS (a * 2))", ""));
  EXPECT_TRUE(refused("wal", kTable, "", "PRAGMA journal_mode=WAL"));
  EXPECT_TRUE(refused("auto-vacuum", kTable, "", "PRAGMA auto_vacuum=FULL"));
  EXPECT_TRUE(refused("missing", "CREATE TABLE u (id INTEGER PRIMARY KEY)", ""));
  // A page whose usable part is too small for the largest row of 200 columns.
  std::string wide = "CREATE TABLE t (id INTEGER PRIMARY KEY";
  for (int column = 0; column < 200; ++column) {
    wide += fmt::format(", c{} INTEGER", column);
  }
  EXPECT_TRUE(refused("wide", (wide + ")").c_str(), "", "PRAGMA page_size=1024"));
}

// A table that got rows by SQL after the loader opened it is not overwritten: install() throws and
// the file keeps its rows.
TEST(SqliteBulkTable, InstallRefusesATableThatIsNoLongerEmpty) {
  const std::string path = fresh_file("changed");
  {
    std::optional<SqliteDatabase> db(create(path));
    auto loader = open_loader(*db);
    loader->append(0, Row{1, 1, 1, 1});
    db->exec("INSERT INTO t VALUES (10, 1, 1, 1)");
    db.reset();
    EXPECT_THROW(loader->install(), SqliteError);
  }
  SqliteDatabase db(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(integrity(db), "ok");
  EXPECT_EQ(db.query_int64("SELECT id FROM t"), 10);
}

} // namespace

// Past 1 GiB the file has SQLite's lock-byte page, which no b-tree may use: the loader skips it.
// Disabled: it writes a 1.3 GB file (run with --gtest_also_run_disabled_tests).
TEST(SqliteBulkTable, DISABLED_SkipsTheLockBytePage) {
  const std::string path = fresh_file("lock-page");
  constexpr std::int64_t kRows = 45000000;
  {
    std::optional<SqliteDatabase> db(create(path));
    auto loader = open_loader(*db);
    for (std::int64_t id = 1; id <= kRows; ++id) {
      loader->append(0, Row{id, id * 1000003, id % 5 == 0 ? Value() : Value(id), -id});
    }
    db.reset();
    loader->install();
  }
  SqliteDatabase db(path, SQLITE_OPEN_READONLY);
  ASSERT_GT(db.query_int64("PRAGMA page_count"), 0x40000000 / 4096 + 1);
  EXPECT_EQ(integrity(db), "ok");
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), kRows);
  EXPECT_EQ(db.query_int64("SELECT sum(c) FROM t"), -kRows * (kRows + 1) / 2);
  db.close();
  fs::remove(path);
}
