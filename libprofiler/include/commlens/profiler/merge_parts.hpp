#pragma once
// The merge of one job at MPI_Finalize, done as a tree so that no process merges every rank in turn
// and no folder has to be shared (docs/design.md, "The merge at MPI_Finalize is a tree"). Each
// folder's leader merges its ranks' files into a part: a database in the merged file's schema, on
// the job's timeline, whose trace rows stay the leaf pages the ranks encoded, listed per rank
// (docs/schema.md, "Part files"). Leaders hand parts up a binomial tree (collectors/pmpi moves
// them over MPI where the folders differ); each merges what it received with its own folder's
// rank files into one part, and rank 0 all of it into commlens.sqlite, copying the leaves in rank
// order. What any step keeps in memory is a per-rank index.
#include "commlens/profiler/merge.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace commlens {

// What a job's ranks agree on at MPI_Finalize, so that every part fits the merged file.
struct JobTimeline {
  std::int64_t origin_ns = 0;            // rank 0's MPI_Init on its own clock
  std::vector<std::int64_t> tile_widths; // of the job's trace (empty: no trace)
};

// A part handed to a merge, and every rank it covers with the place its files stay: all of them
// are left behind when the part cannot be read.
struct PartSource {
  std::string path;
  std::vector<RanksLeftBehind> ranks;
};

struct MergeSources {
  std::string directory;                    // of the rank files
  std::vector<int> ranks;                   // their run ranks (rank-NNNNN.sqlite in directory)
  std::string place;                        // "host:/folder" of the rank files, for messages
  std::vector<PartSource> parts;            // parts received from other leaders
  std::vector<RanksLeftBehind> left_behind; // ranks of parts that never arrived
};

struct PartContents {
  std::vector<int> ranks;                   // merged into the part
  std::vector<RanksLeftBehind> left_behind; // not merged, and where their files stay
};

// Merges the sources into a new part at `path`. A rank file whose pages are missing, or were made
// for another timeline, has them encoded first (RankTracePages, as the rank does at MPI_Finalize).
// A rank file or part that cannot be read is said on stderr and left behind; throws SqliteError
// when the part itself cannot be written.
PartContents merge_into_part(const MergeSources& sources, const JobTimeline& timeline,
                             const std::string& path, const std::function<void(int, int)>& progress = {});

// Merges the sources into the run's database: options.output_path (default
// <sources.directory>/commlens.sqlite), written as .partial and renamed once complete. Removes no
// rank file (the tree's leaders do, once rank 0 says the merge is complete). Throws MergeError
// when no rank could be merged.
MergeResult merge_into_database(const MergeSources& sources, const JobTimeline& timeline,
                                const MergeOptions& options);

// The files a part consists of: the part, then the pages files it lists, as paths.
std::vector<std::string> part_files(const std::string& part_path);

// After a part's pages files were stored under other names in the part's folder (by file name:
// old -> new), makes the part list them so.
void rename_part_pages(const std::string& part_path, const std::map<std::string, std::string>& renamed);

} // namespace commlens
