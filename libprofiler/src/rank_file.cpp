#include "commlens/profiler/rank_file.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace commlens {

std::string rank_database_name(int rank) {
  return fmt::format("rank-{:05d}.sqlite", rank);
}

std::string trace_pages_path(const std::string& rank_file) {
  return rank_file + "-pages";
}

void remove_rank_file(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal", "-bulk", "-pages"}) {
    std::remove((path + suffix).c_str());
  }
}

} // namespace commlens
