#pragma once
// Communicators named for people, the same way in every table and finding: by their name
// (`MPI_COMM_WORLD`, `MPI_Comm_set_name`'s), else by size and origin ("size 2 from MPI_Comm_split
// of MPI_COMM_WORLD"), never by their numeric id, which means nothing to a reader.
#include "commlens/analysis/database.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace commlens::analysis::detail {

class CommunicatorNames {
public:
  explicit CommunicatorNames(const Database& database);

  // The label of `id`; "(no communicator: waits, tests, windows, files)" for the -1 of calls without
  // one and NULL; "communicator 0x..." for an id the communicators table lacks.
  std::string label(std::optional<std::int64_t> id) const;
  // Members of `id` (0 when unknown).
  int size(std::int64_t id) const;

private:
  struct Entry {
    int size = 0;
    std::string name;
    std::string created_by;
    std::optional<std::int64_t> parent;
  };
  std::string label_at_depth(std::int64_t id, int depth) const;

  std::map<std::int64_t, Entry> entries_;
};

} // namespace commlens::analysis::detail
