#pragma once
// One pass over the traced calls of chosen functions for the wait-state rules: every lane's calls
// (a rank's thread) read through its own id range (a rowid range, in time order), the lanes merged
// by start time, so that what one rule holds while waiting for the other side of a message or
// collective stays small however long the trace is. A call that posted a request is given the id of
// the call that completed it (from mpi_requests, read alongside in the same id order).
#include "commlens/analysis/database.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <set>

namespace commlens::analysis::detail {

struct ScannedCall {
  std::int64_t id = 0;
  int rank = 0;
  int function_id = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t peer = -1;
  std::int64_t tag = -1;  // point-to-point; -1 for none and MPI_ANY_TAG
  std::int64_t root = -1; // rooted collectives, a rank of comm_id
  std::int64_t comm_id = -1;
  int phase = 0;
  std::optional<std::int64_t> completion_call_id; // for calls of the request functions
};

// Reads the calls of `functions` and hands them to `visit` in start order across lanes; calls of
// `request_functions` come with their completion call's id. `stored_rows`: read the table behind
// the mpi_calls view directly (faster), when there is one and no filter shadows the view.
void scan_traced_calls(const Database& database, bool stored_rows, const std::set<int>& functions,
                       const std::set<int>& request_functions,
                       const std::function<void(const ScannedCall&)>& visit);

} // namespace commlens::analysis::detail
