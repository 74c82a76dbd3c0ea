#include "commlens/analysis/statement.hpp"

#include "sqlite_error.hpp"

namespace commlens::analysis {
namespace {

// SqliteStatement reports failures as SqliteError; the connection still holds the error code that
// tells a corrupt file from any other failure.
template <typename Action>
auto translating_errors(sqlite3* database, const std::filesystem::path& path, const std::string& doing,
                        Action action) {
  try {
    return action();
  } catch (const SqliteError&) {
    throw detail::sqlite_failure(path, database, doing);
  }
}

} // namespace

Statement::Statement(sqlite3* database, std::string_view sql, const std::filesystem::path& path)
    : database_(database), path_(path),
      statement_(
          translating_errors(database, path, "query", [&] { return SqliteStatement(database, sql); })) {}

Statement& Statement::bind(int index, std::optional<std::int64_t> value) {
  statement_.bind_integer(index, value);
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  statement_.bind(index, value);
  return *this;
}

bool Statement::step() {
  return translating_errors(database_, path_, "query", [&] { return statement_.step(); });
}

void Statement::reset() {
  statement_.reset(); // a failed step was already reported by step()
}

std::int64_t Statement::integer(int column) const {
  return statement_.column_int64(column);
}

std::optional<std::int64_t> Statement::optional_integer(int column) const {
  if (statement_.column_is_null(column))
    return std::nullopt;
  return integer(column);
}

double Statement::real(int column) const {
  return statement_.column_double(column);
}

std::optional<double> Statement::optional_real(int column) const {
  if (statement_.column_is_null(column))
    return std::nullopt;
  return real(column);
}

std::string Statement::text(int column) const {
  return statement_.column_text(column);
}

std::optional<std::string> Statement::optional_text(int column) const {
  if (statement_.column_is_null(column))
    return std::nullopt;
  return text(column);
}

int Statement::column_count() const {
  return sqlite3_column_count(statement_.get());
}

std::string Statement::column_name(int column) const {
  const char* name = sqlite3_column_name(statement_.get(), column);
  return name != nullptr ? name : "";
}

bool Statement::is_blob(int column) const {
  return sqlite3_column_type(statement_.get(), column) == SQLITE_BLOB;
}

} // namespace commlens::analysis
