#include "runtime_settings.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using commlens::RuntimeMode;
using commlens::contract::RuntimeSettings;

struct Read {
  RuntimeSettings settings;
  std::vector<std::string> warnings;
};

Read read(const std::map<std::string, std::string>& values) {
  Read result;
  result.settings = commlens::contract::read_runtime_settings(
      values, [&](const std::string& message) { result.warnings.push_back(message); });
  return result;
}

TEST(RuntimeSettings, RuntimeIsOffByDefaultForAllreduceWithoutTheHostPath) {
  const Read result = read({});
  const RuntimeSettings& settings = result.settings;
  EXPECT_EQ(settings.mode, RuntimeMode::Off);
  EXPECT_EQ(settings.collectives, std::vector<std::string>{"allreduce"});
  EXPECT_EQ(settings.ranks_per_node, 0u);
  EXPECT_EQ(settings.host_percent, std::nullopt); // the tuning table's share
  EXPECT_EQ(settings.algorithm, "auto");
  EXPECT_EQ(settings.tuning_file, "");
  EXPECT_FALSE(settings.background_opens);
  EXPECT_EQ(settings.paths, "");
  EXPECT_EQ(settings.tree_progress, "event");
  EXPECT_EQ(settings.tree_streams, std::nullopt); // the tuning table's
  EXPECT_EQ(settings.resident_bytes, 262144u);
  EXPECT_EQ(settings.resident_linger_us, 1000u);
  EXPECT_EQ(settings.select, "static");
  EXPECT_TRUE(result.warnings.empty());
}

TEST(RuntimeSettings, EverySettingIsRead) {
  const Read result = read({{"COMMLENS_RUNTIME", "ab"},
                            {"COMMLENS_RUNTIME_COLLECTIVES", "p2p, allreduce,ibcast"},
                            {"COMMLENS_RUNTIME_RANKS_PER_NODE", "2"},
                            {"COMMLENS_RUNTIME_HOST_PERCENT", "13"},
                            {"COMMLENS_RUNTIME_ALGORITHM", "two_shot"},
                            {"COMMLENS_RUNTIME_TUNING", "/tmp/table.json"},
                            {"COMMLENS_RUNTIME_BACKGROUND_OPENS", "1"},
                            {"COMMLENS_RUNTIME_PATHS", "off"},
                            {"COMMLENS_RUNTIME_TREE_PROGRESS", "blocking"},
                            {"COMMLENS_RUNTIME_TREE_STREAMS", "3"},
                            {"COMMLENS_RUNTIME_RESIDENT_BYTES", "0"},
                            {"COMMLENS_RUNTIME_RESIDENT_LINGER_US", "250"},
                            {"COMMLENS_RUNTIME_SELECT", "dynamic"}});
  const RuntimeSettings& settings = result.settings;
  EXPECT_EQ(settings.mode, RuntimeMode::AB);
  EXPECT_EQ(settings.collectives, (std::vector<std::string>{"p2p", "allreduce", "ibcast"}));
  EXPECT_EQ(settings.ranks_per_node, 2u);
  EXPECT_EQ(settings.host_percent, 13u);
  EXPECT_EQ(settings.algorithm, "two_shot");
  EXPECT_EQ(settings.tuning_file, "/tmp/table.json");
  EXPECT_TRUE(settings.background_opens);
  EXPECT_EQ(settings.paths, "off");
  EXPECT_EQ(settings.tree_progress, "blocking");
  EXPECT_EQ(settings.tree_streams, 3u);
  EXPECT_EQ(settings.resident_bytes, 0u); // off
  EXPECT_EQ(settings.resident_linger_us, 250u);
  EXPECT_EQ(settings.select, "dynamic");
  EXPECT_TRUE(result.warnings.empty());
}

TEST(RuntimeSettings, OtherKeysAreNotTheRuntimesAndSayNothing) {
  const Read result =
      read({{"COMMLENS_MODE", "tracing"}, {"COMMLENS_NOISE", ""}, {"COMMLENS_RUNTIMES", "x"}});
  EXPECT_EQ(result.settings.mode, RuntimeMode::Off);
  EXPECT_TRUE(result.warnings.empty());
}

TEST(RuntimeSettings, TreeStreamsOverrideTheTableWithinOneToEight) {
  EXPECT_EQ(read({{"COMMLENS_RUNTIME_TREE_STREAMS", "1"}}).settings.tree_streams, 1u);
  EXPECT_EQ(read({{"COMMLENS_RUNTIME_TREE_STREAMS", "8"}}).settings.tree_streams, 8u);
  for (const char* bad_value : {"0", "9", "two"}) {
    const Read bad = read({{"COMMLENS_RUNTIME_TREE_STREAMS", bad_value}});
    EXPECT_EQ(bad.settings.tree_streams, std::nullopt) << bad_value;
    EXPECT_EQ(bad.warnings,
              std::vector<std::string>{"commlens: COMMLENS_RUNTIME_TREE_STREAMS=" + std::string(bad_value) +
                                       " is not valid (accepted: an integer from 1 to 8); using the "
                                       "tuning table's streams"});
  }
}

TEST(RuntimeSettings, SelectionIsStaticUnlessDynamicOrSweepIsAsked) {
  EXPECT_EQ(read({{"COMMLENS_RUNTIME_SELECT", "sweep"}}).settings.select, "sweep");
  const Read bad = read({{"COMMLENS_RUNTIME_SELECT", "learned"}});
  EXPECT_EQ(bad.settings.select, "static");
  EXPECT_EQ(bad.warnings, std::vector<std::string>{"commlens: COMMLENS_RUNTIME_SELECT=learned is not valid "
                                                   "(accepted: static, dynamic, sweep); using static"});
}

// One warning per bad value, in the order of the keys, each naming the value, what is accepted and
// the default that stays, in the words Config uses for its own settings.
TEST(RuntimeSettings, BadValuesWarnOnceEachAndKeepTheDefaults) {
  const Read result = read({{"COMMLENS_RUNTIME", "yes"},
                            {"COMMLENS_RUNTIME_COLLECTIVES", "allreduce,alltoallv"},
                            {"COMMLENS_RUNTIME_RANKS_PER_NODE", "-1"},
                            {"COMMLENS_RUNTIME_HOST_PERCENT", "60"},
                            {"COMMLENS_RUNTIME_ALGORITHM", "three_shot"},
                            {"COMMLENS_RUNTIME_TUNING", ""},
                            {"COMMLENS_RUNTIME_BACKGROUND_OPENS", "later"},
                            {"COMMLENS_RUNTIME_PATHS", ""},
                            {"COMMLENS_RUNTIME_TREE_PROGRESS", "lazy"},
                            {"COMMLENS_RUNTIME_RESIDENT_BYTES", "67108865"},
                            {"COMMLENS_RUNTIME_RESIDENT_LINGER_US", "0"}});
  const RuntimeSettings defaults;
  const RuntimeSettings& settings = result.settings;
  EXPECT_EQ(settings.mode, defaults.mode);
  EXPECT_EQ(settings.collectives, defaults.collectives);
  EXPECT_EQ(settings.ranks_per_node, defaults.ranks_per_node);
  EXPECT_EQ(settings.host_percent, defaults.host_percent);
  EXPECT_EQ(settings.algorithm, defaults.algorithm);
  EXPECT_EQ(settings.tuning_file, defaults.tuning_file);
  EXPECT_EQ(settings.background_opens, defaults.background_opens);
  EXPECT_EQ(settings.paths, defaults.paths);
  EXPECT_EQ(settings.tree_progress, defaults.tree_progress);
  EXPECT_EQ(settings.resident_bytes, defaults.resident_bytes);
  EXPECT_EQ(settings.resident_linger_us, defaults.resident_linger_us);
  const std::vector<std::string> expected = {
      "commlens: COMMLENS_RUNTIME=yes is not valid (accepted: off, on, ab); using off",
      "commlens: COMMLENS_RUNTIME_ALGORITHM=three_shot is not valid (accepted: "
      "auto,one_shot,two_shot,one_shot_striped); using auto",
      "commlens: COMMLENS_RUNTIME_BACKGROUND_OPENS=later is not valid (accepted: 1, 0, yes, no, true, false, "
      "on, "
      "off); using 0",
      "commlens: COMMLENS_RUNTIME_COLLECTIVES=allreduce,alltoallv is not valid (accepted: a comma list of "
      "bcast,gather,scatter,allgather,alltoall,reduce,allreduce,reduce_scatter,reduce_scatter_block,p2p,"
      "ibcast,iallgather,iallreduce,ireduce_scatter,ireduce_scatter_block); using allreduce",
      "commlens: COMMLENS_RUNTIME_HOST_PERCENT=60 is not valid (accepted: an integer from 0 to 50); using "
      "the "
      "tuning table's share",
      "commlens: COMMLENS_RUNTIME_PATHS= is not valid (accepted: off, or the path of the node's copy-path "
      "file); "
      "using the file in the cache directory",
      "commlens: COMMLENS_RUNTIME_RANKS_PER_NODE=-1 is not valid (accepted: 0 (the real nodes) or a number "
      "of "
      "ranks); using 0",
      "commlens: COMMLENS_RUNTIME_RESIDENT_BYTES=67108865 is not valid (accepted: bytes from 0 (off) to "
      "67108864); using 262144",
      "commlens: COMMLENS_RUNTIME_RESIDENT_LINGER_US=0 is not valid (accepted: microseconds from 1 to "
      "1000000); "
      "using 1000",
      "commlens: COMMLENS_RUNTIME_TREE_PROGRESS=lazy is not valid (accepted: event, blocking); using event",
      "commlens: COMMLENS_RUNTIME_TUNING= is not valid (accepted: the path of a tuning table (JSON)); using "
      "the "
      "shipped table",
  };
  EXPECT_EQ(result.warnings, expected);
}

TEST(RuntimeSettings, ModesAreNamedAsTheSettingSpellsThem) {
  for (const RuntimeMode mode : {RuntimeMode::Off, RuntimeMode::On, RuntimeMode::AB}) {
    EXPECT_EQ(commlens::parse_runtime_mode(commlens::runtime_mode_name(mode)), mode);
  }
  EXPECT_EQ(commlens::parse_runtime_mode("AB"), std::nullopt);
}

} // namespace
