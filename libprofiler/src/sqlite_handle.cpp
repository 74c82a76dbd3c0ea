#include "commlens/profiler/sqlite.hpp"

#include <utility>

namespace commlens {

namespace {
std::string describe(sqlite3* db, std::string_view what) {
  const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  return std::string(file != nullptr && *file != '\0' ? file : "database") + ": " + std::string(what) + ": " +
         (db != nullptr ? sqlite3_errmsg(db) : "out of memory");
}
} // namespace

SqliteStatement::SqliteStatement(sqlite3* db, std::string_view sql) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &statement_, nullptr) != SQLITE_OK) {
    throw SqliteError(describe(db, "cannot prepare statement"));
  }
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : statement_(std::exchange(other.statement_, nullptr)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(statement_);
    statement_ = std::exchange(other.statement_, nullptr);
  }
  return *this;
}

SqliteStatement::~SqliteStatement() {
  sqlite3_finalize(statement_);
}

bool SqliteStatement::step() {
  const int result = sqlite3_step(statement_);
  if (result == SQLITE_ROW) {
    return true;
  }
  if (result == SQLITE_DONE) {
    return false;
  }
  sqlite3* db = sqlite3_db_handle(statement_);
  sqlite3_reset(statement_);
  throw SqliteError(describe(db, "statement failed"));
}

void SqliteStatement::run() {
  while (step()) {
  }
  sqlite3_reset(statement_);
}

std::string SqliteStatement::column_text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
  return text != nullptr
             ? std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)))
             : std::string();
}

SqliteDatabase::SqliteDatabase(const std::string& path, int flags) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string message = path + ": " + (db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory");
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(message);
  }
  sqlite3_busy_timeout(db_, 5000);
}

SqliteDatabase::SqliteDatabase(SqliteDatabase&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

SqliteDatabase::~SqliteDatabase() {
  close();
}

void SqliteDatabase::close() {
  if (db_ != nullptr) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
}

void SqliteDatabase::exec(std::string_view sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = path_ + ": " + (error != nullptr ? error : "unknown error");
    sqlite3_free(error);
    throw SqliteError(message);
  }
}

std::int64_t SqliteDatabase::query_int64(std::string_view sql) const {
  SqliteStatement statement(db_, sql);
  return statement.step() ? statement.column_int64(0) : 0;
}

} // namespace commlens
