#include "copy_timing.hpp"

#include <fmt/format.h>

namespace commlens::analysis::detail {

std::string copy_gpu_timed(const Database& database, std::string_view alias) {
  return database.has_column("cuda_copies", "gpu_timed") ? fmt::format("{}gpu_timed = 1", alias) : "1";
}

std::string copy_gpu_ns(const Database& database, std::string_view alias) {
  return fmt::format("CASE WHEN {} THEN {}end_ns - {}start_ns END", copy_gpu_timed(database, alias), alias,
                     alias);
}

std::string ran_on_gpu_clock(const Database& database, std::string_view table) {
  return table == "cuda_copies" ? copy_gpu_timed(database) : "1";
}

std::string copy_count(const Database& database, std::string_view alias) {
  return database.has_column("cuda_copies", "copies") ? fmt::format("{}copies", alias) : "1";
}

std::string copy_timed_bytes(const Database& database, std::string_view alias) {
  return fmt::format("CASE WHEN {} THEN {}bytes END", copy_gpu_timed(database, alias), alias);
}

} // namespace commlens::analysis::detail
