#pragma once
// The families of fuzzed operations; operations() (fuzz_context.hpp) draws from their union.
#include "fuzz_context.hpp"

namespace fuzz {

void add_reductions(std::vector<NamedOperation>& list);
void add_data_movement(std::vector<NamedOperation>& list);
void add_point_to_point(std::vector<NamedOperation>& list);

} // namespace fuzz
