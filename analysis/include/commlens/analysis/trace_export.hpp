#pragma once
// Exports of a database for other tools: a Chrome/Perfetto trace (chrome://tracing, ui.perfetto.dev)
// and one CSV file per table. Both stream rows, so they handle traces larger than memory.
#include "commlens/analysis/database.hpp"

#include <cstdio>
#include <filesystem>

namespace commlens::analysis {

struct ChromeExportCounts {
  std::uint64_t calls = 0;       // complete ("X") events, one per mpi_calls row
  std::uint64_t flows = 0;       // send -> receive arrows
  std::uint64_t copies = 0;      // one per cuda_copies row
  std::uint64_t kernels = 0;     // one per cuda_kernels row
  std::uint64_t nvtx_ranges = 0; // one per user nvtx_ranges row (commlens' MPI domain left out)
};

// Trace Event Format JSON: a process per rank, a lane per thread, each MPI call a complete event
// with its bytes, peer, tag and communicator as args, and a flow arrow from each send to the
// receive it matched by (source, destination, tag, communicator, order). CUDA copies and kernels
// sit on a track per device and the application's NVTX ranges on their own track, inside the
// rank's process and on the same time scale (the collectors store one clock). Throws AnalysisError for
// a database without traced calls (summary mode).
ChromeExportCounts export_chrome_trace(const Database& database, std::FILE* out);

// <directory>/<table>.csv for every table, with a header row; BLOBs as hex. Returns the tables written.
int export_csv_tables(const Database& database, const std::filesystem::path& directory);

} // namespace commlens::analysis
