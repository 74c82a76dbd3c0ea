#pragma once
// What both merges do to the database they write (merge.cpp: the rank files of a folder in one
// process; merge_parts.cpp: the parts of a job's merge tree at MPI_Finalize): the file under a
// name of its own until complete, its connection, the copy of a source's tables onto rank 0's
// timeline, and the run values that say what the merged file holds and lacks.
#include "commlens/profiler/merge_options.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "sqlite_bulk_table.hpp"
#include "trace_materializer.hpp"
#include "trace_rows.hpp"

#include <optional>

#include <string>
#include <vector>

namespace commlens {

// The merged database is written under a name of its own and renamed to the output name once
// complete: a merge that crashes or fails leaves no file under the output name.
class PartialOutput {
public:
  explicit PartialOutput(std::string final_path);
  ~PartialOutput();
  PartialOutput(const PartialOutput&) = delete;
  PartialOutput& operator=(const PartialOutput&) = delete;

  const std::string& path() const { return path_; }
  void rename_to_final();

private:
  std::string final_path_;
  std::string path_;
  bool renamed_ = false;
};

// Removes a database file with the files SQLite and the bulk loader keep beside it.
void remove_with_journals(const std::string& path);

// The merged database's connection: no journal and no sync, as the file is not under its final
// name until it is complete. NOMUTEX: only this thread uses it.
SqliteDatabase open_merged(const std::string& path);

// The merged schema, in a new file.
void create_merged_schema(SqliteDatabase& merged);

// The run's database being written: under its partial name, with the merged schema, and the
// connection that a bulk loader's install closes and opens again.
class MergedFile {
public:
  // options.output_path, else <directory>/commlens.sqlite. With `start_from`, the file is that
  // one renamed (a part of the merge tree, whose rows the merge then need not copy).
  MergedFile(const MergeOptions& options, const std::string& directory, const std::string& start_from = {});
  static std::string final_path_for(const MergeOptions& options, const std::string& directory);
  const std::string& final_path() const { return final_path_; }
  const std::string& path() const { return output_.path(); }
  // The same object after install() (emplaced in place).
  SqliteDatabase& db() { return *connection_; }
  // Writes the loader's pages with no connection open, then inserts the rows it could not take.
  void install(SqliteBulkLoader& bulk, const LateRows& late_rows);
  // Closes the file and gives it its final name.
  void finish();

private:
  std::string final_path_;
  PartialOutput output_;
  std::optional<SqliteDatabase> connection_;
};

// Copies every table the schema merges (schema::kTableMerges) from the file attached as "src",
// its timestamp columns moved along `map` (rank files of older versions lack some tables). Of the
// tables whose first rank's copy wins (the run values, the catalogues), the source's rows are
// kept where the file has none, or replace the file's where `source_comes_first` (it holds a
// lower rank than any merged before: sources are not always merged in rank order).
void copy_attached_tables(SqliteDatabase& merged, const ClockMap& map, bool source_comes_first = false);

// "0,2,5"
std::string join_ranks(const std::vector<int>& ranks);

// Once every source is in: how many processes the run had (the jobs the registries in
// `registry_directories` list, else the run's world size), so which ranks are missing beside those
// already in result.missing_ranks; the ranks whose clocks were never compared with rank 0's (a
// warning on stderr); the losses; all written to the run table. result.merged_ranks is sorted.
void record_run_values(SqliteDatabase& merged, const std::vector<std::string>& registry_directories,
                       MergeResult& result);

} // namespace commlens
