#pragma once
// The `commlens` command as the integration tests run it: what a user would type after a job.
#include <string>

namespace commlens::integration {

// Standard output of `commlens ARGUMENTS` (a shell command line: quote paths with spaces).
std::string commlens_output(const std::string& arguments);

} // namespace commlens::integration
