#pragma once
// Errors the analysis layer reports about its input. Every message is one line that names the file
// (or option) and the problem, so the CLI can print it as is and exit with status 2.
#include <filesystem>
#include <stdexcept>
#include <string>

namespace commlens::analysis {

// Bad input of any kind: the CLI maps every AnalysisError to exit status 2.
struct AnalysisError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The database file cannot be used: missing, not SQLite, truncated, corrupt, foreign or too new.
class DatabaseError : public AnalysisError {
public:
  DatabaseError(const std::filesystem::path& path, const std::string& problem)
      : AnalysisError(path.string() + ": " + problem), path_(path), problem_(problem) {}

  const std::filesystem::path& path() const noexcept { return path_; }
  const std::string& problem() const noexcept { return problem_; }

private:
  std::filesystem::path path_;
  std::string problem_;
};

// A report filter that selects nothing the database knows (a rank or phase that does not exist).
struct FilterError : AnalysisError {
  using AnalysisError::AnalysisError;
};

} // namespace commlens::analysis
