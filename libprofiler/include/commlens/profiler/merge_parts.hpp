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
#include "commlens/profiler/merge_sources.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace commlens {

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
