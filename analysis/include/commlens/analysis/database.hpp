#pragma once
// A commlens database opened read-only and validated, the entry point of every report. Opening
// checks, in order: the file exists, it is a SQLite file, it is complete (not truncated), it is a
// commlens database (PRAGMA application_id), its schema version is one this build understands, and
// it holds the tables reports read. Each failure is a DatabaseError with its own message.
#include "commlens/analysis/statement.hpp"

#include <filesystem>
#include <string_view>
#include <vector>

namespace commlens::analysis {

class Database {
public:
  explicit Database(std::filesystem::path path);

  const std::filesystem::path& path() const noexcept { return path_; }
  int schema_version() const noexcept { return schema_version_; }

  Statement prepare(std::string_view sql) const;
  bool has_table(std::string_view name) const;
  // True when table `table` has column `column` (files written before a column was added lack it).
  bool has_column(std::string_view table, std::string_view column) const;
  // True when `name` exists and holds at least one row.
  bool has_rows(std::string_view name) const;
  // Throws DatabaseError when the run recorded no MPI call at all: commands that analyse calls
  // refuse such a file rather than print an empty result that looks like success.
  void require_events() const;
  // The ranks a merged database lacks: `commlens merge` records the run's processes (every job's
  // world, spawned jobs included) and merged_ranks, and a rank whose file never arrived (or could
  // not be read) has no `ranks` row.
  // Empty for a complete run and for a single rank file, which promises only itself.
  std::vector<int> missing_ranks() const;
  int world_size() const; // run.processes, else run.world_size, else the number of ranks rows
  // Throws DatabaseError naming the missing ranks: a report of part of a job must be asked for.
  void require_all_ranks() const;

private:
  void validate();

  std::filesystem::path path_;
  SqliteDatabase connection_;
  int schema_version_ = 0;
};

} // namespace commlens::analysis
