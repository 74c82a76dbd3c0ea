#pragma once
// A small two-rank trace-mode database with every report section filled, its numbers chosen so
// tests can state them: see the .cpp for the exact pattern.
#include "test_database.hpp"

namespace commlens::test {

// `time_scale` multiplies every call's duration (a crafted "slower run" for compare tests).
void fill_trace_run(TestDatabase& database, int time_scale = 1);

// Adds traced MPI_Allreduce calls of 64 bytes on rank 0 run by implementation `runtime:ring`
// (id 1): four calls of 500 ns, against four of 1000 ns by `mpi`.
void add_runtime_implementation_calls(TestDatabase& database);

} // namespace commlens::test
