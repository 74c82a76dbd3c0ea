#pragma once
// The name of a rank's SQLite file in the output directory, the files kept beside it, and their
// removal. Shared by the profiler, the rank store, the job registry, the trace pages and the merge.
#include <string>

namespace commlens {

std::string rank_database_name(int rank); // "rank-00003.sqlite"

// The file beside a rank file holding the trace pages it encoded: "<rank file>-pages".
std::string trace_pages_path(const std::string& rank_file);

// Removes a rank file with the files SQLite and commlens keep beside it (journal, WAL, the
// encoder's spill file, its trace pages).
void remove_rank_file(const std::string& path);

} // namespace commlens
