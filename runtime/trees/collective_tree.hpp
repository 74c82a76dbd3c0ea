#pragma once
// The tree of a rooted collective (bcast, reduce) over one communicator, built level by level on
// the hardware: the ranks of each GPU form a tree under their GPU's leader, the GPU leaders of
// each node a tree under the node's leader, the node leaders a tree under the root. Levels are
// joined through the leaders inside the one communicator (the topology-aware trees of "ADAPT: An
// Event-Based Adaptive Collective Communication Framework", Luo et al.), so data
// crosses each slow link once. The root leads its GPU and its node. Pure C++: built from where
// the ranks run, tested without a GPU.
#include "trees/tree_shape.hpp"

#include <span>
#include <string>
#include <vector>

namespace commlens::runtime::trees {

// Where a rank runs: ranks with equal node ids share a node, with equal (node, gpu) a GPU.
struct Placement {
  int node = 0;
  int gpu = 0;
};

struct Tree {
  int root = 0;
  std::vector<int> parent;                // parent[rank]; -1 for the root
  std::vector<std::vector<int>> children; // children[rank], in the order the rank serves them:
                                          // other nodes first, then other GPUs, then its own GPU

  int size() const noexcept { return static_cast<int>(parent.size()); }
  bool is_leaf(int rank) const noexcept { return children[rank].empty(); }
  int depth() const; // hops from the root to the deepest rank (0 for a single rank)
};

// The tree of `placements.size()` ranks rooted at `root` (0 <= root < size). Leaders: the root on
// its GPU and node, else the lowest rank of a GPU or node.
Tree build_tree(std::span<const Placement> placements, int root, const LevelShapes& shapes);

// One level: members[0] is the level's root; adds the edges of `shape` among the members to tree.
void connect_level(std::span<const int> members, Shape shape, Tree& tree);

// "gpu=flat,node=binomial,nodes=binomial": the shapes as runtime_ops names them.
std::string describe(const LevelShapes& shapes);

} // namespace commlens::runtime::trees
