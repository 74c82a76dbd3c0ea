#include "launch/child_process.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <sys/wait.h>
#include <unistd.h>

namespace commlens::cli {
namespace {

constexpr int kCannotExecute = 127;

// Ctrl-C reaches the whole foreground process group, so the child (mpirun) gets it and decides;
// commlens itself waits to collect what the job wrote.
class IgnoreTerminalSignals {
public:
  IgnoreTerminalSignals() {
    previous_interrupt_ = std::signal(SIGINT, SIG_IGN);
    previous_quit_ = std::signal(SIGQUIT, SIG_IGN);
  }
  ~IgnoreTerminalSignals() {
    std::signal(SIGINT, previous_interrupt_);
    std::signal(SIGQUIT, previous_quit_);
  }
  IgnoreTerminalSignals(const IgnoreTerminalSignals&) = delete;
  IgnoreTerminalSignals& operator=(const IgnoreTerminalSignals&) = delete;

private:
  void (*previous_interrupt_)(int) = SIG_DFL;
  void (*previous_quit_)(int) = SIG_DFL;
};

} // namespace

int run_child_process(const std::vector<std::string>& command) {
  std::vector<char*> arguments;
  for (const auto& argument : command)
    arguments.push_back(const_cast<char*>(argument.c_str()));
  arguments.push_back(nullptr);

  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = fork();
  if (child < 0) {
    fmt::print(stderr, "commlens: cannot start '{}': {}\n", command.front(), std::strerror(errno));
    return kCannotExecute;
  }
  if (child == 0) {
    execvp(arguments.front(), arguments.data());
    fmt::print(stderr, "commlens: cannot run '{}': {}\n", command.front(), std::strerror(errno));
    _exit(kCannotExecute);
  }

  const IgnoreTerminalSignals ignore_while_waiting;
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR)
      return kCannotExecute;
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

} // namespace commlens::cli
