#pragma once
// What Dynamic selection (dynamic_learner.hpp) chooses among, per kind of call: the allreduce
// algorithms safe for the call, the data-movement algorithms where they differ, and tree
// settings around the table's. Each list depends only on what every rank sees alike (the
// communicator's shape, the call's size bucket, in place), in a fixed order, so a learner's
// candidate index means the same on every rank and on every call of its bucket.
#include "data_movement_rules.hpp"
#include "tree_rules.hpp"
#include "tuning_table.hpp"

#include <vector>

namespace commlens::runtime::tuning {

// The smallest size of the call's bucket (size_bucket), the size every bucket-wide choice is made for.
std::uint64_t bucket_floor(std::uint64_t bytes) noexcept;

// kAlgorithms' order, the unsafe ones left out; striping only with a host share in `settings`.
std::vector<Choice> allreduce_candidates(const CallShape& call, const ChoiceSettings& settings);

// direct; gpu_leader where ranks share GPUs and the collective is not gather (with one rank per
// GPU, or for gather, both are the same); staged.
std::vector<MovementAlgorithm> movement_candidates(const MovementShape& call);

// The table's choice for the bucket first, then flat, binomial and chain on the level that has
// several members (the GPU's ranks when every rank is on one GPU, else the GPUs of the node) with
// 64 KiB and 1 MiB segments and the table's window; settings that cut the bucket's messages into
// the same segments as one already listed are left out. `commlens tune` (sweep) tries more:
// 64 KiB, 256 KiB and 1 MiB segments, each with windows 2 and 8.
enum class TreeBreadth { Dynamic, Sweep };
std::vector<TreeChoice> tree_candidates(const Table& table, std::string_view table_name, const TreeCall& call,
                                        TreeBreadth breadth = TreeBreadth::Dynamic);

} // namespace commlens::runtime::tuning
