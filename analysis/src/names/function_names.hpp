#pragma once
// Function names by id, from the functions table: what the report parts and the findings print for
// a call's function_id.
#include "commlens/analysis/database.hpp"

#include <map>
#include <string>

namespace commlens::analysis::detail {

std::map<int, std::string> query_function_names(const Database& database);

} // namespace commlens::analysis::detail
