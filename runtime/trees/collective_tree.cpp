#include "trees/collective_tree.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <stdexcept>
#include <utility>

namespace commlens::runtime::trees {

namespace {

// Member index i's parent index on a level of `shape` (i >= 1).
std::size_t parent_index(std::size_t i, Shape shape) {
  switch (shape) {
  case Shape::Chain:
    return i - 1;
  case Shape::Binary:
    return (i - 1) / 2;
  case Shape::Binomial:
    return i - std::bit_floor(i);
  case Shape::Flat:
    break;
  }
  return 0;
}

// Level members: the leader first, then the others in ascending rank order.
std::vector<int> with_leader_first(std::vector<int> ranks, int leader) {
  std::erase(ranks, leader);
  std::ranges::sort(ranks);
  ranks.insert(ranks.begin(), leader);
  return ranks;
}

} // namespace

int Tree::depth() const {
  int deepest = 0;
  for (int rank = 0; rank < size(); ++rank) {
    int hops = 0;
    for (int at = rank; parent[at] >= 0; at = parent[at]) {
      ++hops;
    }
    deepest = std::max(deepest, hops);
  }
  return deepest;
}

void connect_level(std::span<const int> members, Shape shape, Tree& tree) {
  // Binomial parents serve their largest subtree first: the child i + 2^k with the highest k, which
  // is the last one added below, so those children are inserted in reverse.
  std::vector<std::vector<int>> level_children(members.size());
  for (std::size_t i = 1; i < members.size(); ++i) {
    const std::size_t parent = parent_index(i, shape);
    tree.parent[members[i]] = members[parent];
    level_children[parent].push_back(members[i]);
  }
  for (std::size_t i = 0; i < members.size(); ++i) {
    std::vector<int>& kids = level_children[i];
    if (shape == Shape::Binomial) {
      std::ranges::reverse(kids);
    }
    auto& served = tree.children[members[i]];
    served.insert(served.end(), kids.begin(), kids.end());
  }
}

Tree build_tree(std::span<const Placement> placements, int root, const LevelShapes& shapes) {
  const int size = static_cast<int>(placements.size());
  if (root < 0 || root >= size) {
    throw std::invalid_argument("build_tree: root outside the communicator");
  }
  Tree tree;
  tree.root = root;
  tree.parent.assign(size, -1);
  tree.children.assign(size, {});
  // Ranks by node, and by GPU within a node (ordered maps: every rank builds the same tree).
  std::map<int, std::map<int, std::vector<int>>> nodes;
  for (int rank = 0; rank < size; ++rank) {
    nodes[placements[rank].node][placements[rank].gpu].push_back(rank);
  }
  const auto leader_of = [&](const std::vector<int>& ranks) {
    return std::ranges::find(ranks, root) != ranks.end() ? root : *std::ranges::min_element(ranks);
  };
  std::vector<int> node_leaders;
  std::vector<std::pair<std::vector<int>, std::vector<std::vector<int>>>> levels; // per node
  for (const auto& [node, gpus] : nodes) {
    std::vector<int> everyone;
    std::vector<int> gpu_leaders;
    std::vector<std::vector<int>> gpu_levels;
    for (const auto& [gpu, ranks] : gpus) {
      everyone.insert(everyone.end(), ranks.begin(), ranks.end());
      gpu_leaders.push_back(leader_of(ranks));
      gpu_levels.push_back(with_leader_first(ranks, gpu_leaders.back()));
    }
    node_leaders.push_back(leader_of(everyone));
    levels.emplace_back(with_leader_first(gpu_leaders, node_leaders.back()), std::move(gpu_levels));
  }
  // Served in this order: a leader's children on other nodes, then on other GPUs, then its GPU's.
  connect_level(with_leader_first(node_leaders, root), shapes.nodes, tree);
  for (const auto& [gpu_leaders, gpu_levels] : levels) {
    connect_level(gpu_leaders, shapes.node, tree);
  }
  for (const auto& [gpu_leaders, gpu_levels] : levels) {
    for (const std::vector<int>& members : gpu_levels) {
      connect_level(members, shapes.gpu, tree);
    }
  }
  return tree;
}

std::string describe(const LevelShapes& shapes) {
  return std::string("gpu=") + shape_name(shapes.gpu) + ",node=" + shape_name(shapes.node) +
         ",nodes=" + shape_name(shapes.nodes);
}

} // namespace commlens::runtime::trees
