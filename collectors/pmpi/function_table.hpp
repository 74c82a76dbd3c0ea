#pragma once
// Names and families of every function this build intercepts (generated function_table.cpp).
// FunctionId i is element i; id 0 is MPI_Init, which also counts as the creator of the predefined
// communicators (CommunicatorInfo::created_by == 0).
#include "commlens/profiler/profiler.hpp"

#include <vector>

namespace commlens::pmpi {

std::vector<FunctionDescription> function_descriptions();

} // namespace commlens::pmpi
