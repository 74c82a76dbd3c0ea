#pragma once
// One wording for SQLite failures, shared by opening and querying, so a corrupt page reads the
// same whether it is found by validation or in the middle of a report.
#include "commlens/analysis/errors.hpp"

#include <sqlite3.h>

#include <string>

namespace commlens::analysis::detail {

inline DatabaseError sqlite_failure(const std::filesystem::path& path, sqlite3* database,
                                    const std::string& doing) {
  const int code = database == nullptr ? SQLITE_ERROR : sqlite3_errcode(database) & 0xff;
  const std::string message = database == nullptr ? "out of memory" : sqlite3_errmsg(database);
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
    return DatabaseError(path, "corrupt database (" + message + ")");
  return DatabaseError(path, doing + " failed (" + message + ")");
}

} // namespace commlens::analysis::detail
