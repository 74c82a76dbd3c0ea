#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/trace_export.hpp"

#include <fmt/format.h>

#include <fstream>

namespace commlens::analysis {
namespace {

// RFC 4180: quote a field holding a separator, a quote or a line break; double inner quotes.
std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos)
    return value;
  std::string quoted = "\"";
  for (const char c : value) {
    if (c == '"')
      quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

std::string hex(const std::string& bytes) {
  std::string text = "0x";
  for (const unsigned char byte : bytes)
    text += fmt::format("{:02x}", byte);
  return text;
}

void write_table(const Database& database, const std::string& table, const std::filesystem::path& file) {
  std::ofstream out(file);
  if (!out)
    throw AnalysisError(file.string() + ": cannot create file");
  auto rows = database.prepare(fmt::format("SELECT * FROM \"{}\"", table));
  for (int column = 0; column < rows.column_count(); ++column)
    out << (column ? "," : "") << csv_field(rows.column_name(column));
  out << '\n';
  while (rows.step()) {
    for (int column = 0; column < rows.column_count(); ++column)
      out << (column ? "," : "")
          << csv_field(rows.is_blob(column) ? hex(rows.text(column)) : rows.text(column));
    out << '\n';
  }
  if (!out)
    throw AnalysisError(file.string() + ": write failed");
}

} // namespace

int export_csv_tables(const Database& database, const std::filesystem::path& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error)
    throw AnalysisError(directory.string() + ": cannot create directory (" + error.message() + ")");
  // mpi_calls and mpi_requests are views of mpi_call_rows and mpi_request_rows (docs/schema.md): the
  // views are exported, not their storage.
  auto tables = database.prepare(
      "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT "
      "LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT IN ('mpi_call_rows', 'mpi_request_rows') ORDER BY name");
  int written = 0;
  while (tables.step()) {
    const auto table = tables.text(0);
    write_table(database, table, directory / (table + ".csv"));
    ++written;
  }
  return written;
}

} // namespace commlens::analysis
