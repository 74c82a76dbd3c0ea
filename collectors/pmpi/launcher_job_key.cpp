#include "launcher_job_key.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace commlens::pmpi {

namespace {

struct LauncherVariables {
  const char* family;
  const char* job;
  const char* rank;
};

constexpr LauncherVariables kLaunchers[] = {
    {"pmix", "PMIX_NAMESPACE", "PMIX_RANK"},
    {"ompi", "OMPI_MCA_ess_base_jobid", "OMPI_COMM_WORLD_RANK"},
};

bool names_rank(const char* text, int world_rank) {
  if (text == nullptr || *text == '\0') {
    return false;
  }
  char* end = nullptr;
  const long rank = std::strtol(text, &end, 10);
  return *end == '\0' && rank == world_rank;
}

} // namespace

std::string launcher_job_key(int world_rank) {
  for (const LauncherVariables& launcher : kLaunchers) {
    const char* job = std::getenv(launcher.job);
    if (job != nullptr && *job != '\0' && names_rank(std::getenv(launcher.rank), world_rank)) {
      std::string key = std::string(launcher.family) + ":" + job;
      // The registry separates its fields by blanks.
      std::replace_if(
          key.begin(), key.end(), [](unsigned char c) { return std::isspace(c) != 0; }, '_');
      return key;
    }
  }
  return {};
}

} // namespace commlens::pmpi
