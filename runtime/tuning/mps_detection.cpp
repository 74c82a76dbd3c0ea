#include "mps_detection.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace commlens::runtime::tuning {

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
    if (std::getline(comm, name) && name.starts_with("nvidia-cuda-mps")) {
      return true;
    }
  }
  return false;
}

} // namespace commlens::runtime::tuning
