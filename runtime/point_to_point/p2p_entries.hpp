#pragma once
// The point-to-point entries the runtime installs in the PMPI collector's hooks: each hands its
// call to the process's PointToPoint (runtime_state().p2p) with its function's id.
#include "collector_hooks.hpp"

namespace commlens::runtime {

void install_point_to_point_entries(pmpi::RuntimeEntries& entries);

} // namespace commlens::runtime
