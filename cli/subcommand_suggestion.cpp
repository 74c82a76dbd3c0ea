#include "subcommand_suggestion.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string_view>
#include <vector>

namespace commlens::cli {
namespace {

// Edits (insert, delete, substitute, swap two neighbours) that turn one word into the other.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> cost(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i)
    cost[i][0] = i;
  std::iota(cost[0].begin(), cost[0].end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cost[i][j] =
          std::min({cost[i - 1][j] + 1, cost[i][j - 1] + 1, cost[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cost[i][j] = std::min(cost[i][j], cost[i - 2][j - 2] + 1);
    }
  return cost[a.size()][b.size()];
}

} // namespace

std::optional<std::string> unknown_subcommand_message(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-')
    return std::nullopt;
  const std::string_view typed = argv[1];
  std::string nearest;
  std::size_t best = std::string::npos;
  for (const auto* subcommand : app.get_subcommands({})) {
    const auto& name = subcommand->get_name();
    if (name == typed)
      return std::nullopt;
    // A beginning of the name ("hist") is nearer than any edit.
    const auto distance = name.starts_with(typed) ? 0 : edit_distance(typed, name) + 1;
    if (distance < best) {
      best = distance;
      nearest = name;
    }
  }
  return fmt::format("commlens: '{}' is not a commlens subcommand; did you mean '{}'? (commlens --help lists "
                     "them)",
                     typed, nearest);
}

} // namespace commlens::cli
