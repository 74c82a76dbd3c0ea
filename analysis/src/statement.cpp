#include "commlens/analysis/statement.hpp"

#include "sqlite_error.hpp"

#include <utility>

namespace commlens::analysis {

Statement::Statement(sqlite3* database, std::string_view sql, const std::filesystem::path& path)
    : database_(database), path_(path) {
  if (sqlite3_prepare_v2(database_, sql.data(), static_cast<int>(sql.size()), &statement_, nullptr) !=
      SQLITE_OK)
    throw detail::sqlite_failure(path_, database_, "query");
}

Statement::~Statement() {
  sqlite3_finalize(statement_);
}

Statement::Statement(Statement&& other) noexcept
    : database_(other.database_), statement_(std::exchange(other.statement_, nullptr)),
      path_(std::move(other.path_)) {}

Statement& Statement::bind(int index, std::optional<std::int64_t> value) {
  const int status =
      value ? sqlite3_bind_int64(statement_, index, *value) : sqlite3_bind_null(statement_, index);
  if (status != SQLITE_OK)
    throw detail::sqlite_failure(path_, database_, "binding a query parameter");
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  if (sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT) !=
      SQLITE_OK)
    throw detail::sqlite_failure(path_, database_, "binding a query parameter");
  return *this;
}

bool Statement::step() {
  const int status = sqlite3_step(statement_);
  if (status == SQLITE_ROW)
    return true;
  if (status == SQLITE_DONE)
    return false;
  throw detail::sqlite_failure(path_, database_, "query");
}

void Statement::reset() {
  sqlite3_reset(statement_); // a failed step was already reported by step()
}

std::int64_t Statement::integer(int column) const {
  return sqlite3_column_int64(statement_, column);
}

std::optional<std::int64_t> Statement::optional_integer(int column) const {
  if (sqlite3_column_type(statement_, column) == SQLITE_NULL)
    return std::nullopt;
  return integer(column);
}

double Statement::real(int column) const {
  return sqlite3_column_double(statement_, column);
}

std::optional<double> Statement::optional_real(int column) const {
  if (sqlite3_column_type(statement_, column) == SQLITE_NULL)
    return std::nullopt;
  return real(column);
}

std::optional<std::string> Statement::optional_text(int column) const {
  if (sqlite3_column_type(statement_, column) == SQLITE_NULL)
    return std::nullopt;
  return text(column);
}

int Statement::column_count() const {
  return sqlite3_column_count(statement_);
}

std::string Statement::column_name(int column) const {
  const char* name = sqlite3_column_name(statement_, column);
  return name != nullptr ? name : "";
}

bool Statement::is_blob(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_BLOB;
}

std::string Statement::text(int column) const {
  const auto* characters = sqlite3_column_text(statement_, column);
  if (characters == nullptr)
    return {};
  return {reinterpret_cast<const char*>(characters),
          static_cast<std::size_t>(sqlite3_column_bytes(statement_, column))};
}

} // namespace commlens::analysis
