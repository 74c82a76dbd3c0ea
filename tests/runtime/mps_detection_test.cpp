// MPS detection: a control daemon counts only while its pipe exists and its process is alive; a
// daemon that quit and was never reaped (a zombie) does not. The "daemon" is a child process that
// names itself as the real one does in /proc.
#include "mps_detection.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using commlens::runtime::tuning::mps_control_daemon_running;

class MpsDetection : public ::testing::Test {
protected:
  void SetUp() override {
    pipes_ = fs::temp_directory_path() / ("commlens-mps-test-" + std::to_string(getpid()));
    fs::create_directories(pipes_);
    setenv("CUDA_MPS_PIPE_DIRECTORY", pipes_.c_str(), 1);
  }
  void TearDown() override {
    if (daemon_ > 0) {
      kill(daemon_, SIGKILL);
      waitpid(daemon_, nullptr, 0);
    }
    unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    fs::remove_all(pipes_);
  }
  void make_control_pipe() { std::ofstream(pipes_ / "control") << ""; }
  // A machine running the real daemon (its pipe in the default place) would answer for it.
  static bool real_daemon_may_run() { return fs::exists("/tmp/nvidia-mps/control"); }
  // A child named like the control daemon that sleeps until killed, or exits at once (then it stays
  // a zombie, since this test reaps it only in TearDown).
  void start_daemon(bool exit_at_once) {
    daemon_ = fork();
    if (daemon_ == 0) {
      prctl(PR_SET_NAME, "nvidia-cuda-mps-control");
      if (exit_at_once) {
        _exit(0);
      }
      pause();
      _exit(0);
    }
    ASSERT_GT(daemon_, 0);
    const fs::path stat = fs::path("/proc") / std::to_string(daemon_) / "stat";
    for (int tries = 0; tries < 500; ++tries) { // until the child has named itself (and exited)
      std::ifstream file(stat);
      std::string line;
      std::getline(file, line);
      const bool named = line.find("(nvidia-cuda-mps") != std::string::npos;
      const bool zombie = line.find(") Z") != std::string::npos;
      if (named && zombie == exit_at_once) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    FAIL() << "the child never reached its state";
  }

  fs::path pipes_;
  pid_t daemon_ = -1;
};

TEST_F(MpsDetection, NoPipeMeansNoMps) {
  start_daemon(false);
  EXPECT_FALSE(mps_control_daemon_running());
}

TEST_F(MpsDetection, PipeWithoutDaemonMeansNoMps) {
  if (real_daemon_may_run()) {
    GTEST_SKIP() << "an MPS control daemon may run on this machine";
  }
  make_control_pipe();
  EXPECT_FALSE(mps_control_daemon_running());
}

TEST_F(MpsDetection, PipeAndLiveDaemonMeanMps) {
  make_control_pipe();
  start_daemon(false);
  EXPECT_TRUE(mps_control_daemon_running());
}

TEST_F(MpsDetection, AZombieDaemonIsNotMps) {
  if (real_daemon_may_run()) {
    GTEST_SKIP() << "an MPS control daemon may run on this machine";
  }
  make_control_pipe();
  start_daemon(true);
  EXPECT_FALSE(mps_control_daemon_running());
}

} // namespace
