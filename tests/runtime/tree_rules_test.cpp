// The tuning table's "trees" section: parsing, round trip, the choice, and the shipped tables.
#include "shipped_tables.hpp"
#include "tree_rules.hpp"

#include <gtest/gtest.h>

#include <string>

namespace commlens::runtime::tuning {
namespace {

std::string table_with_trees(const std::string& trees) {
  return R"({"format": 1, "gpu": "x", "rules": [{"algorithm": "one_shot"}], "trees": )" + trees + "}";
}

TEST(TreeRules, ParsesEveryField) {
  const Table table = parse_table(table_with_trees(R"([
    {"collective": "reduce", "gpus": "two", "ranks_share_gpu": false, "max_bytes": 4096, "gpu_shape": "chain",
     "node_shape": "binary", "nodes_shape": "flat", "segment_bytes": 8192, "window": 3, "streams": 2, "why": "w"},
    {}])"));
  ASSERT_EQ(table.trees.size(), 2u);
  const TreeRule& rule = table.trees[0];
  EXPECT_EQ(rule.collective, RootedCollective::Reduce);
  EXPECT_EQ(rule.gpus, GpuCount::Two);
  EXPECT_EQ(rule.ranks_share_gpu, false);
  EXPECT_EQ(rule.max_bytes, 4096u);
  EXPECT_EQ(rule.shapes, (trees::LevelShapes{trees::Shape::Chain, trees::Shape::Binary, trees::Shape::Flat}));
  EXPECT_EQ(rule.segment_bytes, 8192u);
  EXPECT_EQ(rule.window, 3u);
  EXPECT_EQ(rule.streams, 2u);
  EXPECT_EQ(table.trees[1], TreeRule{}); // every field optional
  EXPECT_EQ(table.trees[1].streams, 1u); // tables written before streams existed: one stream
  EXPECT_EQ(parse_table(table_json(table)).trees, table.trees);
}

TEST(TreeRules, MpsAndPushReadWriteAndChoose) {
  const Table table = parse_table(table_with_trees(R"([
    {"collective": "bcast", "mps": false, "push": true, "segment_bytes": 65536},
    {"collective": "bcast", "mps": true, "window": 2},
    {"window": 8}])"));
  ASSERT_EQ(table.trees.size(), 3u);
  EXPECT_EQ(table.trees[0].mps, false);
  EXPECT_TRUE(table.trees[0].push);
  EXPECT_EQ(table.trees[1].mps, true);
  EXPECT_FALSE(table.trees[1].push);
  EXPECT_EQ(table.trees[2].mps, std::nullopt);
  EXPECT_EQ(parse_table(table_json(table)).trees, table.trees);
  TreeCall call{RootedCollective::Bcast, 4, 1, 1 << 20, false};
  TreeChoice choice = choose_tree(table, "t", call);
  EXPECT_EQ(choice.source, "table:t tree rule 1");
  EXPECT_TRUE(choice.push);
  call.mps = true;
  choice = choose_tree(table, "t", call);
  EXPECT_EQ(choice.source, "table:t tree rule 2");
  EXPECT_FALSE(choice.push);
  call.collective = RootedCollective::Reduce;
  EXPECT_EQ(choose_tree(table, "t", call).source, "table:t tree rule 3");
}

TEST(TreeRules, RejectsBadValuesNamingThePart) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"trees": 1})", "trees"},
      {R"([{"collective": "gather"}])", "trees[0].collective"},
      {R"([{"gpu_shape": "ring"}])", "trees[0].gpu_shape"},
      {R"([{"segment_bytes": 100}])", "trees[0].segment_bytes"},
      {R"([{"segment_bytes": 1073741824}])", "trees[0].segment_bytes"},
      {R"([{}, {"window": 0}])", "trees[1].window"},
      {R"([{"window": 65}])", "trees[0].window"},
      {R"([{"streams": 0}])", "trees[0].streams"},
      {R"([{"streams": 9}])", "trees[0].streams"},
      {R"([{"streams": "2"}])", "trees[0].streams"},
      {R"([{"in_place": true}])", "trees[0]"},
      {R"([{"max_bytes": -1}])", "trees[0].max_bytes"},
      {R"([{"push": true}])", "trees[0].push"}, // a reduce, or a rule for both, cannot push
      {R"([{"collective": "reduce", "push": true}])", "trees[0].push"},
      {R"([{"mps": "yes"}])", "trees[0].mps"},
  };
  for (const auto& [trees, part] : cases) {
    try {
      parse_table(table_with_trees(trees));
      ADD_FAILURE() << trees << " was accepted";
    } catch (const TableError& error) {
      EXPECT_TRUE(std::string(error.what()).starts_with(part)) << error.what();
    }
  }
}

TEST(TreeRules, FirstMatchingRuleWinsElseTheFixedChoice) {
  const Table table = parse_table(table_with_trees(R"([
    {"collective": "bcast", "gpus": "one", "gpu_shape": "chain", "segment_bytes": 4096},
    {"gpus": "more", "max_bytes": 1000, "node_shape": "flat", "window": 8, "streams": 4},
    {"ranks_share_gpu": true, "gpu_shape": "binary"}])"));
  TreeChoice choice = choose_tree(table, "t", {RootedCollective::Bcast, 4, 1, 1 << 20});
  EXPECT_EQ(choice.shapes.gpu, trees::Shape::Chain);
  EXPECT_EQ(choice.segment_bytes, 4096u);
  EXPECT_EQ(choice.source, "table:t tree rule 1");
  choice = choose_tree(table, "t", {RootedCollective::Reduce, 4, 1, 1 << 20}); // rule 1 is bcast only
  EXPECT_EQ(choice.source, "table:t tree rule 3");
  EXPECT_EQ(choice.streams, 1u);
  choice = choose_tree(table, "t", {RootedCollective::Reduce, 3, 3, 1000});
  EXPECT_EQ(choice.window, 8u);
  EXPECT_EQ(choice.streams, 4u);
  EXPECT_EQ(choice.source, "table:t tree rule 2");
  choice = choose_tree(table, "t", {RootedCollective::Reduce, 3, 3, 1001});
  EXPECT_EQ(choice.source, "fallback");
  EXPECT_EQ(choice.shapes, trees::LevelShapes{});
  EXPECT_GT(choice.window, 0u);
  EXPECT_EQ(choice.streams, 1u);
}

TEST(TreeRules, ShippedTablesCarryTheDefaultTreeRules) {
  const NamedTable h100 = shipped_table_for_gpu("NVIDIA H100 80GB HBM3");
  const NamedTable other = shipped_table_for_gpu("Some GPU");
  ASSERT_FALSE(other.table.trees.empty());
  // The measured rules first, then the default ones for the shapes not measured.
  ASSERT_GT(h100.table.trees.size(), other.table.trees.size());
  EXPECT_TRUE(std::equal(other.table.trees.begin(), other.table.trees.end(),
                         h100.table.trees.end() - static_cast<std::ptrdiff_t>(other.table.trees.size())));
  // Ranks sharing one GPU: flat; several GPUs: a tree between them.
  const TreeChoice one = choose_tree(other.table, other.name, {RootedCollective::Bcast, 4, 1, 1 << 20});
  EXPECT_EQ(one.shapes.gpu, trees::Shape::Flat);
  EXPECT_EQ(one.source, "table:default tree rule 1");
  for (const TreeRule& rule : other.table.trees) {
    EXPECT_EQ(rule.streams, 1u); // the default rules name no streams: one, as before
  }
  for (const TreeRule& rule : h100.table.trees) { // measured: what won, within the parser's bounds
    EXPECT_GE(rule.streams, 1u);
    EXPECT_LE(rule.streams, kMaxStreams);
  }
  for (const std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{1} << 28}) {
    EXPECT_NE(choose_tree(other.table, other.name, {RootedCollective::Reduce, 8, 8, bytes}).source,
              "fallback");
  }
}

} // namespace
} // namespace commlens::runtime::tuning
