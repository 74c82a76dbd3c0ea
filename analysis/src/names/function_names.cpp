#include "function_names.hpp"

namespace commlens::analysis::detail {

std::map<int, std::string> query_function_names(const Database& database) {
  auto query = database.prepare("SELECT id, name FROM functions");
  std::map<int, std::string> names;
  while (query.step())
    names.emplace(static_cast<int>(query.integer(0)), query.text(1));
  return names;
}

} // namespace commlens::analysis::detail
