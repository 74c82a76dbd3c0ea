#pragma once
// A progress line on stderr for work that may take more than a second, shown only on a terminal
// (CI logs and pipes stay clean) and only once a second has passed (quick runs stay quiet).
#include "commlens/analysis/report.hpp"

namespace commlens::cli {

// Empty (no progress) when stderr is not a terminal.
analysis::ReportProgress terminal_progress(std::string command);

} // namespace commlens::cli
