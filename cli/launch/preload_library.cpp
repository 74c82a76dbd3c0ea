#include "launch/preload_library.hpp"

#include "commlens/analysis/errors.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <vector>

namespace commlens::cli {
namespace {

constexpr const char* kLibraryName = "libcommlens.so";

std::vector<std::filesystem::path> install_prefix_candidates() {
  std::error_code error;
  const auto executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error)
    return {};
  const auto prefix = executable.parent_path().parent_path();
  std::vector<std::filesystem::path> candidates;
#ifdef COMMLENS_INSTALL_LIBDIR
  candidates.push_back(prefix / COMMLENS_INSTALL_LIBDIR / kLibraryName);
#endif
  for (const auto& entry : std::filesystem::directory_iterator(prefix, error))
    if (entry.is_directory() && entry.path().filename().string().starts_with("lib"))
      candidates.push_back(entry.path() / kLibraryName);
  return candidates;
}

} // namespace

std::filesystem::path find_preload_library() {
  if (const char* configured = std::getenv("COMMLENS_LIBRARY");
      configured != nullptr && *configured != '\0') {
    if (!std::filesystem::is_regular_file(configured))
      throw analysis::AnalysisError(fmt::format("COMMLENS_LIBRARY={}: no such file", configured));
    return std::filesystem::absolute(configured);
  }
  auto candidates = install_prefix_candidates();
#ifdef COMMLENS_BUILD_TREE_LIBRARY
  candidates.emplace_back(COMMLENS_BUILD_TREE_LIBRARY);
#endif
  std::string searched;
  for (const auto& candidate : candidates) {
    if (std::filesystem::is_regular_file(candidate))
      return candidate;
    searched += fmt::format("{}{}", searched.empty() ? "" : ", ", candidate.string());
  }
  throw analysis::AnalysisError(
      fmt::format("cannot find {} (looked in: {}); set COMMLENS_LIBRARY to its path", kLibraryName,
                  searched.empty() ? "nowhere" : searched));
}

void preload_in_child_processes(const std::filesystem::path& library) {
  const char* existing = std::getenv("LD_PRELOAD");
  const std::string preload =
      existing != nullptr && *existing != '\0' ? library.string() + ":" + existing : library.string();
  setenv("LD_PRELOAD", preload.c_str(), 1);
}

} // namespace commlens::cli
