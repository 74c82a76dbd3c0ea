#include "terminal_progress.hpp"

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <unistd.h>

namespace commlens::cli {

analysis::ReportProgress terminal_progress(std::string command) {
  if (isatty(STDERR_FILENO) != 1)
    return {};
  struct State {
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    bool shown = false;
  };
  auto state = std::make_shared<State>();
  return [command = std::move(command), state](std::string_view section, int done, int total) {
    if (!state->shown && std::chrono::steady_clock::now() - state->start < std::chrono::seconds(1))
      return;
    state->shown = true;
    // \33[K clears what a longer previous section name left behind.
    fmt::print(stderr, "\rcommlens {}: {}/{} {}\33[K", command, done, total, section);
    if (done == total)
      fmt::print(stderr, "\n");
  };
}

} // namespace commlens::cli
