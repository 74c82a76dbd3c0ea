#include "database.hpp"

#include <sqlite3.h>
#include <stdexcept>

namespace commlens::integration {

Database::Database(const std::filesystem::path& path) : path_(path) {
  if (!std::filesystem::exists(path))
    throw std::runtime_error("no database at " + path.string());
  if (sqlite3_open_v2(path.c_str(), &handle_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    const std::string message = handle_ ? sqlite3_errmsg(handle_) : "out of memory";
    sqlite3_close(handle_);
    throw std::runtime_error("cannot open " + path.string() + ": " + message);
  }
  sqlite3_busy_timeout(handle_, 5000);
}

Database::~Database() {
  sqlite3_close(handle_);
}

std::vector<Row> Database::query(const std::string& sql) const {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(handle_, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK)
    throw std::runtime_error(path_.string() + ": " + sqlite3_errmsg(handle_) + " in: " + sql);
  std::vector<Row> rows;
  int step;
  while ((step = sqlite3_step(statement)) == SQLITE_ROW) {
    Row row(sqlite3_column_count(statement));
    for (int column = 0; column < static_cast<int>(row.size()); ++column) {
      const int type = sqlite3_column_type(statement, column);
      if (type == SQLITE_NULL)
        continue;
      row[column].is_null = false;
      if (type == SQLITE_INTEGER)
        row[column].integer = sqlite3_column_int64(statement, column);
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, column));
      if (text)
        row[column].text = text;
    }
    rows.push_back(std::move(row));
  }
  const std::string error = step == SQLITE_DONE ? "" : sqlite3_errmsg(handle_);
  sqlite3_finalize(statement);
  if (!error.empty())
    throw std::runtime_error(path_.string() + ": " + error + " in: " + sql);
  return rows;
}

std::int64_t Database::scalar(const std::string& sql) const {
  const auto rows = query(sql);
  return rows.empty() || rows[0].empty() ? 0 : rows[0][0].as_int();
}

bool Database::has_table(const std::string& name) const {
  return scalar("SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name = '" + name +
                "'") == 1;
}

std::string Database::integrity() const {
  const auto rows = query("PRAGMA integrity_check");
  return rows.empty() || !rows[0][0].text ? "no answer" : *rows[0][0].text;
}

} // namespace commlens::integration
