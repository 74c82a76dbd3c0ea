#pragma once
// PRAGMA integrity_check's answer, one string ("ok" for a sound file), for the tests that write
// SQLite files without SQLite (the merge's B-tree pages).
#include "commlens/profiler/sqlite.hpp"

#include <string>

namespace commlens {

inline std::string integrity(SqliteDatabase& db) {
  auto check = db.prepare("PRAGMA integrity_check");
  std::string text;
  while (check.step()) {
    text += check.column_text(0);
  }
  return text;
}

} // namespace commlens
