#include "job.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>

namespace commlens::integration {
namespace {

std::string quoted(const std::string& word) {
  std::string out = "'";
  for (char c : word)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::filesystem::path fresh_directory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "commlens-integration-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed for " + pattern);
  return pattern;
}

} // namespace

std::filesystem::path JobResult::rank_database(int rank) const {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.sqlite", rank);
  return output_directory / name;
}

std::string JobResult::describe() const {
  return "exit code " + std::to_string(exit_code) + " in " + work_directory.string() + "\n--- stdout ---\n" +
         standard_output + "--- stderr ---\n" + standard_error;
}

JobResult run_profiled_job(const JobSpec& spec) {
  // Open MPI refuses to start as root without these; the tests run as root in CI containers.
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  JobResult result;
  result.work_directory = fresh_directory();
  result.output_directory = spec.node_outputs.empty() ? spec.output.value_or(result.work_directory / "out")
                                                      : spec.node_outputs.front();

  std::map<std::string, std::string> environment = spec.environment;
  environment["LD_PRELOAD"] = spec.hydra ? spec.hydra->preload.string() : COMMLENS_TEST_PRELOAD;
  environment["COMMLENS_OUTPUT"] = result.output_directory.string();
  if (spec.mode)
    environment["COMMLENS_MODE"] = *spec.mode;

  // Hydra passes variables as `-genv NAME VALUE` and starts any number of ranks without being told.
  const std::string launcher = spec.hydra ? spec.hydra->launcher.string() : COMMLENS_TEST_MPIRUN;
  std::string command =
      "cd " + quoted(result.work_directory.string()) + " && timeout " + std::to_string(spec.timeout_seconds);
  if (spec.without_launcher) {
    command += " env";
    for (const auto& [name, value] : environment)
      command += " " + quoted(name + "=" + value);
  } else if (!spec.node_outputs.empty()) { // Open MPI's app contexts, each with all its variables
    command += " " + quoted(launcher) + " --oversubscribe";
    const auto nodes = static_cast<int>(spec.node_outputs.size());
    for (int node = 0; node < nodes; ++node) {
      environment["COMMLENS_OUTPUT"] = spec.node_outputs[static_cast<std::size_t>(node)].string();
      command += std::string(node == 0 ? "" : " :") + " -np " + std::to_string(spec.ranks / nodes);
      for (const auto& [name, value] : environment)
        command += " -x " + quoted(name + "=" + value);
      for (const auto& word : spec.command)
        command += " " + quoted(word);
    }
  } else {
    command += " " + quoted(launcher) + " -np " + std::to_string(spec.ranks) +
               (spec.hydra ? "" : " --oversubscribe");
    for (const auto& [name, value] : environment)
      command +=
          spec.hydra ? " -genv " + quoted(name) + " " + quoted(value) : " -x " + quoted(name + "=" + value);
  }
  if (spec.node_outputs.empty() || spec.without_launcher) {
    for (const auto& word : spec.command)
      command += " " + quoted(word);
  }
  command += " > stdout.txt 2> stderr.txt < /dev/null";

  const int status = std::system(command.c_str());
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.standard_output = read_file(result.work_directory / "stdout.txt");
  result.standard_error = read_file(result.work_directory / "stderr.txt");
  return result;
}

std::string example_program(const std::string& name) {
  return (std::filesystem::path(COMMLENS_TEST_EXAMPLES_DIR) / name).string();
}
std::string python_interpreter() {
  return COMMLENS_TEST_PYTHON;
}
std::string mpi4py_example() {
  return COMMLENS_TEST_MPI4PY_EXAMPLE;
}

} // namespace commlens::integration
