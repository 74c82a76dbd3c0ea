#include "communicator_names.hpp"

#include <fmt/format.h>

namespace commlens::analysis::detail {
namespace {

// Every member registers a communicator; the row of its lowest world rank stands for it, and that
// rank is a member of the parent too, so the parent is named from the same process.
constexpr std::string_view kCommunicatorsSql = R"sql(
WITH representative AS (SELECT id, MIN(rank) AS rank FROM communicators GROUP BY id)
SELECT m.id, m.size, COALESCE(m.name, ''), COALESCE(f.name, ''), m.parent_id
FROM representative r JOIN communicators m ON m.id = r.id AND m.rank = r.rank
LEFT JOIN functions f ON f.id = m.created_by
)sql";

// "size 2 from MPI_Comm_split of size 4 from MPI_Cart_create of MPI_COMM_WORLD" stops here.
constexpr int kParentsNamed = 2;

} // namespace

CommunicatorNames::CommunicatorNames(const Database& database) {
  auto query = database.prepare(kCommunicatorsSql);
  while (query.step())
    entries_[query.integer(0)] = {static_cast<int>(query.optional_integer(1).value_or(0)), query.text(2),
                                  query.text(3), query.optional_integer(4)};
}

std::string CommunicatorNames::label(std::optional<std::int64_t> id) const {
  if (!id || *id < 0)
    return "(no communicator: waits, tests, windows, files)";
  return label_at_depth(*id, 0);
}

int CommunicatorNames::size(std::int64_t id) const {
  const auto found = entries_.find(id);
  return found == entries_.end() ? 0 : found->second.size;
}

std::string CommunicatorNames::label_at_depth(std::int64_t id, int depth) const {
  const auto found = entries_.find(id);
  if (found == entries_.end())
    return fmt::format("communicator {:#x}", id);
  const auto& entry = found->second;
  if (!entry.name.empty())
    return entry.name;
  if (entry.created_by.empty())
    return fmt::format("communicator {:#x} (size {})", id, entry.size);
  auto label = fmt::format("size {} from {}", entry.size, entry.created_by);
  if (!entry.parent)
    return label;
  if (depth >= kParentsNamed)
    return label + " of another communicator";
  return label + " of " + label_at_depth(*entry.parent, depth + 1);
}

} // namespace commlens::analysis::detail
