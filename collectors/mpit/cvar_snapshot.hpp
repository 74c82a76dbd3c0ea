#pragma once
// The control variables (MCA parameters in Open MPI) as they were when the run started: the `cvars`
// table, so a profile says which eager limits and protocol switches it was measured with.
#include "commlens/profiler/profiler.hpp"

namespace commlens::mpit {

// Stores every cvar of this rank; returns how many. Cvars bound to an object get a NULL value.
int store_cvar_snapshot(Profiler& profiler);

} // namespace commlens::mpit
