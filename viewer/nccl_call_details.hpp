#pragma once
// What the NCCL side table `nccl_calls` adds to an NCCL call's tooltip: one row per NCCL call,
// linked to its mpi_calls row by `mpi_call_id` (or `call_id`), holding what NCCL reported about the
// call. Its columns are shown as stored, name and value, so columns the table gains later appear
// without a change here. A file without the table (written before it existed, or without the NCCL
// collector) shows the mpi_calls row alone: nothing here is required.
// This is the viewer's one direct read of a table: a generic row, no aggregation.
#include "commlens/analysis/database.hpp"

#include <QString>

#include <cstdint>

namespace commlens::viewer {

// True when the file has the table and a column linking it to mpi_calls.
bool has_nccl_call_details(const analysis::Database& database);

// "<br>NCCL: column value, ..." for the call's row; empty without the table or a row for the call.
QString describe_nccl_call(const analysis::Database& database, std::int64_t call_id);

} // namespace commlens::viewer
