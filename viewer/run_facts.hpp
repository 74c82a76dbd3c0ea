#pragma once
// What the run table says about how a run was recorded, in words for the summary's headline: which
// collectors ran and, for those that did not, why (the keys are in docs/schema.md, "run").
#include <QString>

#include <string>
#include <utility>
#include <vector>

namespace commlens::viewer {

using RunTable = std::vector<std::pair<std::string, std::string>>;

// The value of `key`; empty when the run table lacks it.
QString run_value(const RunTable& run, std::string_view key);

// "MPI calls (trace) · MPI_T off: the MPI library exposes no performance variables · CUDA on ·
// NVTX ranges on · GPU runtime ab". A collector the run table says nothing about is left out.
QString collectors_line(const RunTable& run);

} // namespace commlens::viewer
