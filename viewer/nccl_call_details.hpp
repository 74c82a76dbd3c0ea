#pragma once
// What the NCCL collector's side table `nccl_calls` (docs/schema.md) adds to an NCCL call's
// tooltip: the call's datatype and reduction op by name, its stream, NCCL root and peer (ranks of
// the NCCL communicator) and group nesting. A file without the table (written before it existed)
// shows the mpi_calls row alone: nothing here is required.
// This is the viewer's one direct read of a table: one row by its key, no aggregation.
#include "commlens/analysis/database.hpp"

#include <QString>

#include <cstdint>

namespace commlens::viewer {

// True when the file has the table and its code tables.
bool has_nccl_call_details(const analysis::Database& database);

// "<br>NCCL: column value, ..." for the call's row; empty without the table or a row for the call.
QString describe_nccl_call(const analysis::Database& database, std::int64_t call_id);

} // namespace commlens::viewer
