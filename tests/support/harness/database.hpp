#pragma once
// A read-only view of a commlens database through the sqlite3 C API.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace commlens::integration {

struct Value {
  std::optional<std::int64_t> integer; // empty for NULL or text
  std::optional<std::string> text;     // empty for NULL
  bool is_null = true;
  std::int64_t as_int(std::int64_t if_null = 0) const { return is_null ? if_null : integer.value_or(0); }
};
using Row = std::vector<Value>;

class Database {
public:
  // Opens read-write so that SQLite can recover a WAL left by a killed process.
  explicit Database(const std::filesystem::path& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  std::vector<Row> query(const std::string& sql) const; // throws std::runtime_error on error
  std::int64_t scalar(const std::string& sql) const;    // first column of the first row, 0 if none
  bool has_table(const std::string& name) const;
  std::string integrity() const; // "ok" when PRAGMA integrity_check passes

private:
  sqlite3* handle_ = nullptr;
  std::filesystem::path path_;
};

} // namespace commlens::integration
