#include "mps_detection.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace commlens::runtime::tuning {

namespace {

// A daemon that quit stays in /proc as a zombie until its parent reaps it, which in a container
// whose first process reaps nothing is never: its state letter, after the name's closing
// parenthesis in /proc/PID/stat, says so.
bool process_alive(const std::filesystem::path& process) {
  std::ifstream stat_file(process / "stat");
  std::string stat;
  std::getline(stat_file, stat);
  const auto name_end = stat.rfind(')');
  if (name_end == std::string::npos || name_end + 2 >= stat.size()) {
    return false;
  }
  const char state = stat[name_end + 2];
  return state != 'Z' && state != 'X';
}

} // namespace

bool mps_control_daemon_running() {
  namespace fs = std::filesystem;
  const char* pipes = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const fs::path control =
      fs::path(pipes != nullptr && *pipes != '\0' ? pipes : "/tmp/nvidia-mps") / "control";
  std::error_code error;
  if (!fs::exists(control, error)) {
    return false;
  }
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    // /proc cuts a process name to 15 characters.
    if (std::getline(comm, name) && name.starts_with("nvidia-cuda-mps") && process_alive(entry.path())) {
      return true;
    }
  }
  return false;
}

} // namespace commlens::runtime::tuning
