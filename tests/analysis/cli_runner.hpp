#pragma once
// Runs the built `commlens` binary the way a user or CI script does, capturing status and output.
#include <string>
#include <vector>

namespace commlens::test {

struct CliResult {
  int status = -1;
  std::string out;
  std::string err;
};

// `environment` is prepended as shell assignments, e.g. "COMMLENS_LIBRARY=/x".
CliResult run_cli(const std::vector<std::string>& arguments, const std::string& environment = "");

std::string read_file(const std::string& path);
std::string shell_quote(const std::string& text);

} // namespace commlens::test
