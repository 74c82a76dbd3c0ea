#pragma once
// Runs the profiled command as a child process and reports its exit status the way a shell does.
#include <string>
#include <vector>

namespace commlens::cli {

// Runs `command` (searched in PATH) with this process's environment and waits for it. Returns its
// exit status, 128 + signal if a signal ended it, or 127 if it could not be started (as a shell).
int run_child_process(const std::vector<std::string>& command);

} // namespace commlens::cli
