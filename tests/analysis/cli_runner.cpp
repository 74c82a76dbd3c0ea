#include "cli_runner.hpp"

#include "test_database.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace commlens::test {

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char character : text)
    quoted += character == '\'' ? std::string("'\\''") : std::string(1, character);
  return quoted + "'";
}

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::stringstream content;
  content << file.rdbuf();
  return content.str();
}

CliResult run_cli(const std::vector<std::string>& arguments, const std::string& environment) {
  const auto directory = make_temp_directory("commlens-cli");
  const auto out_path = (directory / "stdout").string();
  const auto err_path = (directory / "stderr").string();
  std::string command = environment + " " + shell_quote(COMMLENS_CLI_PATH);
  for (const auto& argument : arguments)
    command += " " + shell_quote(argument);
  command += " >" + shell_quote(out_path) + " 2>" + shell_quote(err_path) + " </dev/null";
  const int status = std::system(command.c_str());
  CliResult result;
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  return result;
}

} // namespace commlens::test
